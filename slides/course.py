"""The course map (notebooks/course.yml), and a course built from part of the series.

    python slides/course.py --readme                 rewrite the README's course map from course.yml
    python slides/course.py --plan 3 --out DIR       DIR/notebooks: the plan's notebooks, references rewritten
    python slides/course.py --notebooks 01 02 07 --out DIR      any set of notebooks, the same way

`make course PLAN=3` (or NB="01 02 07") then builds DIR/slides (the decks and an index with the plan) and
DIR/handouts from DIR/notebooks.

A notebook refers to others by number ("notebook 04", "notebooks 01–03 and 05"), by link
("[04 · Bidirectional layers](04_bidirectional.ipynb)") and in its closing "**Next:**" line. In a course
that leaves some out, each reference to one left out points at it in the full series online (the
number becomes a link; in a code cell's comment, the address is added), and "Next:" names the next
notebook of the course. `dangling` finds any reference left that a reader could not follow; building a
course stops unless there is none.
"""

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
MAP = NOTEBOOKS / "course.yml"
README = ROOT / "README.md"
BEGIN, END = "<!-- course map: slides/course.py --readme writes this part -->", "<!-- end of the course map -->"

NUMBER = r"(?:0[1-9]|1[0-9])(?![0-9])"
# "notebook 04", "a notebook-01 loop", "Notebooks 04, 05 and 08", "notebooks 01–03 and 05",
# "notebooks 04 (bidirectional) and 05 (stacked)"
MENTION_PATTERN = (
    r"\b[Nn]otebooks?[\s-]+<N>(?:\s*\([^()]*\))?(?:(?:\s*(?:–|-|,|,?\s+and|,?\s+or)\s*)<N>(?:\s*\([^()]*\))?)*"
)
MENTION = re.compile(MENTION_PATTERN.replace("<N>", NUMBER))
# dangling() reads a rewritten text with each number linked online replaced by \x01 and the number: a
# mention then reads on past its links ("notebooks 01, [02](…), 03 and 05" is one mention of four).
MARKED_MENTION = re.compile(MENTION_PATTERN.replace("<N>", f"\x01?{NUMBER}"))
LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]+)\)")
LOCAL = re.compile(rf"^(?:\./)?({NUMBER})_[a-z0-9_]+\.ipynb(#.*)?$")
NEXT = re.compile(r"\*\*Next:\*\*.*?(?=\n\n|\Z)", re.S)


def course_map():
    """course.yml, with each notebook's file, title, study minutes and (from its deck) presenting minutes."""
    import build  # slides/build.py: this folder is first on the path (python slides/course.py, or pytest's pythonpath)

    data = yaml.safe_load(MAP.read_text())
    for number, entry in data["notebooks"].items():
        (path,) = NOTEBOOKS.glob(f"{number}_*.ipynb")
        nb = json.loads(path.read_text())
        first = "".join(nb["cells"][0]["source"])
        entry["file"] = path.name
        entry["title"] = build.title(nb, path.stem).split("·", 1)[-1].strip()
        entry["study"] = int(re.search(r"About (\d+) minutes", first)[1])
        entry["present"] = build.presenting_minutes(nb)
        entry["you_need"] = re.search(r"You need:(.*?)\*", first, re.S)[1]
    return data


def numbers_in(mention):
    """The notebooks a mention names, ranges spelled out: 'notebooks 01–03 and 05' -> ['01', '02', '03', '05']."""
    bare = re.sub(r"\([^()]*\)", "", mention)
    found = []
    for start, dash, end in re.findall(rf"({NUMBER})(?:\s*(–|-)\s*({NUMBER}))?", bare):
        found += [f"{n:02d}" for n in range(int(start), int(end) + 1)] if dash else [start]
    return found


def lecture_minutes(plan, notebooks):
    """[(presenting minutes, study minutes after)] of each lecture of a plan."""
    return [
        (sum(notebooks[n]["present"] for n in lecture["present"]), sum(notebooks[n]["study"] for n in lecture["after"]))
        for lecture in plan["lectures"]
    ]


def plan_notebooks(plan):
    return [n for lecture in plan["lectures"] for n in lecture["present"] + lecture["after"]]


# The README's course map, and the decks' index.


def markdown_map(data):
    """The course map as markdown: a table of the notebooks, then each plan lecture by lecture."""
    notebooks = data["notebooks"]
    lines = [
        "| Notebook | | Needs | Study | Deck |",
        "| --- | --- | --- | --- | --- |",
    ]
    for number, entry in notebooks.items():
        needs = ", ".join(entry["needs"]) or "nothing"
        kind = "core" if entry["core"] else "optional"
        lines.append(
            f"| [{number} · {entry['title']}](notebooks/{entry['file']}) | {kind} | {needs} | "
            f"{entry['study']} min | {entry['present']} min |"
        )
    total = sum(entry["present"] for entry in notebooks.values())
    lines += ["", f"All {len(notebooks)} decks: about {total} min ({total / 60:.1f} hours)."]
    for plan in data["plans"].values():
        lines += ["", f"**{plan['title']}** (`make course PLAN={len(plan['lectures'])}`):", ""]
        for index, (lecture, (present, study)) in enumerate(
            zip(plan["lectures"], lecture_minutes(plan, notebooks)), start=1
        ):
            shown = " and ".join(f"{n} {notebooks[n]['title']}" for n in lecture["present"])
            after = " and ".join(f"{n} {notebooks[n]['title']}" for n in lecture["after"])
            then = f"; then, on their own: {after} (about {study} min)" if after else ""
            lines.append(f"{index}. {shown} (about {present} min){then}.")
        left = [n for n in notebooks if n not in plan_notebooks(plan)]
        if left:
            lines += ["", f"Left out, linked online where the others refer to them: {', '.join(left)}."]
    return "\n".join(lines)


def html_map(data, plans=None):
    """The same, as HTML for the decks' index; `plans` limits it to those plans (a course shows its own)."""
    import html

    notebooks = data["notebooks"]
    rows = "".join(
        f"<tr><td>{n} · {html.escape(e['title'])}</td><td>{'core' if e['core'] else 'optional'}</td>"
        f"<td>{', '.join(e['needs']) or 'nothing'}</td><td>{e['study']} min</td><td>{e['present']} min</td></tr>"
        for n, e in notebooks.items()
    )
    parts = [
        '<h2 id="course-map">Course map</h2>',
        "<table><caption>Each notebook: core or optional, the notebooks it needs, and its times "
        "(studied alone; presented as a deck)</caption>"
        '<tr><th scope="col">Notebook</th><th scope="col">Kind</th><th scope="col">Needs</th>'
        f'<th scope="col">Study</th><th scope="col">Deck</th></tr>{rows}</table>',
    ]
    for key, plan in data["plans"].items():
        if plans is not None and key not in plans:
            continue
        items = ""
        for lecture, (present, study) in zip(plan["lectures"], lecture_minutes(plan, notebooks)):
            shown = " and ".join(f"{n} {html.escape(notebooks[n]['title'])}" for n in lecture["present"])
            after = " and ".join(f"{n} {html.escape(notebooks[n]['title'])}" for n in lecture["after"])
            then = f"; then, on their own: {after} (about {study} min)" if after else ""
            items += f"<li>{shown} (about {present} min){then}.</li>"
        parts.append(f"<h3>{html.escape(plan['title'])}</h3><ol>{items}</ol>")
    return "\n  ".join(parts)


def write_readme(data):
    text = README.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    README.write_text(text[:start] + "\n" + markdown_map(data) + "\n" + text[end:])


# A course from part of the series.


def rewrite(text, kept, data, code=False):
    """`text` (a cell's source) with every reference to a notebook not in `kept` pointing at it online."""
    notebooks, online = data["notebooks"], data["online"]

    def address(number):
        return online + notebooks[number]["file"]

    if code:  # a comment cannot link: the line ends with the address
        lines = []
        for line in text.split("\n"):
            left = [n for m in MENTION.finditer(line) for n in numbers_in(m[0]) if n not in kept]
            lines.append(line + "".join(f" (notebook {n}: {address(n)})" for n in dict.fromkeys(left)))
        return "\n".join(lines)
    text = NEXT.sub(lambda m: _next(m[0], kept, notebooks, address), text)
    links = []

    def hide(match):  # links keep their text; a link to a notebook left out leads online
        target = LOCAL.match(match[2])
        if target and target[1] not in kept:
            links.append(f"[{match[1]}]({address(target[1])}{target[2] or ''})")
        else:
            links.append(match[0])
        return f"\x00{len(links) - 1}\x00"

    text = LINK.sub(hide, text)

    def link_numbers(match):
        spelled = re.sub(  # a range with a notebook left out inside is spelled out, so that it can link
            rf"({NUMBER})\s*[–-]\s*({NUMBER})",
            lambda r: (
                r[0]
                if all(f"{n:02d}" in kept for n in range(int(r[1]), int(r[2]) + 1))
                else ", ".join(f"{n:02d}" for n in range(int(r[1]), int(r[2]) + 1))
            ),
            match[0],
        )
        return re.sub(
            rf"(?<![0-9]){NUMBER}",
            lambda n: n[0] if n[0] in kept or n[0] not in numbers_in(match[0]) else f"[{n[0]}]({address(n[0])})",
            spelled,
        )

    text = MENTION.sub(link_numbers, text)
    return re.sub(r"\x00(\d+)\x00", lambda m: links[int(m[1])], text)


def _next(line, kept, notebooks, address):
    """The closing "Next:" line of a course: the next notebook it keeps, or where the series goes on."""
    target = LOCAL.search(line[line.index("](") + 2 : line.index(")")]) if "](" in line else None
    if target is None or target[1] in kept:
        return line
    later = [n for n in sorted(kept) if n > target[1]]
    if later:
        n = later[0]
        return f"**Next:** [{n} · {notebooks[n]['title']}]({notebooks[n]['file']})."
    n = target[1]
    return (
        f"**Next:** this course ends here; the full series goes on with [{n} · {notebooks[n]['title']}]({address(n)})."
    )


def dangling(text, kept, data, code=False):
    """The references in `text` a reader of the course could not follow: to a notebook left out, not online."""
    online, found = data["online"], []
    for match in LINK.finditer(text):
        target = LOCAL.match(match[2])
        if target and target[1] not in kept:
            found.append(match[0])
    marked = re.sub(
        rf"\[({NUMBER})\]\(([^)\s]+)\)",
        lambda m: f"\x01{m[1]}" if m[2] == online + data["notebooks"][m[1]]["file"] else m[0],
        text,
    )
    for match in MARKED_MENTION.finditer(marked):
        tail = marked[match.end() : match.end() + 400]
        linked = set(re.findall(rf"\x01({NUMBER})", match[0]))
        for number in numbers_in(match[0].replace("\x01", "")):
            if number in kept or number in linked:
                continue
            address = online + data["notebooks"][number]["file"]
            in_comment = code and address in match[0] + tail.split("\n")[0]
            if not in_comment and not _inside_online_link(marked, match.start(), online):
                found.append(f"{match[0]} ({number})")
    return found


def _inside_online_link(text, position, online):
    """True when `position` lies in the text of a markdown link that leads online."""
    for match in LINK.finditer(text):
        if match.start() <= position < match.start() + len(match[1]) + 1 and match[2].startswith(online):
            return True
    return False


def build_course(kept, out, data):
    """OUT/notebooks: the kept notebooks and the pages beside them (glossary, shapes), references rewritten; return the dangling ones."""
    target = out / "notebooks"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    left = []
    for page in NOTEBOOKS.glob("*.md"):  # the glossary links the notebooks that introduce each term
        text = rewrite(page.read_text(), kept, data)
        (target / page.name).write_text(text)
        left += [f"{page.name}: {d}" for d in dangling(text, kept, data)]
    for number in sorted(kept):
        name = data["notebooks"][number]["file"]
        nb = json.loads((NOTEBOOKS / name).read_text())
        for cell in nb["cells"]:
            code = cell["cell_type"] == "code"
            source = rewrite("".join(cell["source"]), kept, data, code=code)
            cell["source"] = source.splitlines(keepends=True)
            left += [f"{name}: {d}" for d in dangling(source, kept, data, code=code)]
        (target / name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return left


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", action="store_true", help="rewrite the README's course map")
    parser.add_argument("--plan", help="a plan of course.yml: 3 or 6")
    parser.add_argument("--notebooks", nargs="*", default=[], help="or the notebooks' numbers")
    parser.add_argument("--out", type=Path, help="where the course goes (e.g. build/course-3)")
    args = parser.parse_args()
    data = course_map()
    if args.readme:
        write_readme(data)
        print(f"{README.name}: course map rewritten from {MAP.relative_to(ROOT)}")
    if args.out:
        kept = set(plan_notebooks(data["plans"][args.plan]) if args.plan else args.notebooks)
        if not kept or not kept <= set(data["notebooks"]):
            sys.exit(f"slides/course.py: name a plan ({', '.join(data['plans'])}) or notebooks from 01 to 13")
        left = build_course(kept, args.out, data)
        if left:
            sys.exit("references a reader of this course could not follow:\n  " + "\n  ".join(left))
        print(f"{args.out / 'notebooks'}: {len(kept)} notebooks ({', '.join(sorted(kept))}), no dangling reference")


if __name__ == "__main__":
    main()
