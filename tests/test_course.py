"""The course map (notebooks/course.yml) says what the notebooks say, its plans work, and a course leaves no reference dangling."""

import json
import random
import re

import course  # slides/course.py (pyproject.toml's pythonpath puts slides/ on the path)
import pytest

DATA = course.course_map()
NOTEBOOKS = DATA["notebooks"]
CELLS = {n: json.loads((course.NOTEBOOKS / e["file"]).read_text())["cells"] for n, e in NOTEBOOKS.items()}


def test_the_map_covers_every_notebook():
    assert sorted(NOTEBOOKS) == sorted(p.name[:2] for p in course.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("number", sorted(NOTEBOOKS))
def test_needs_are_what_the_notebook_says_it_needs(number):
    first_sentence = re.split(r"\.\s", NOTEBOOKS[number]["you_need"])[0]  # 05 goes on to say what comes later
    said = [n for m in course.MENTION.finditer(first_sentence) for n in course.numbers_in(m[0])]
    assert sorted(set(said)) == NOTEBOOKS[number]["needs"]


@pytest.mark.parametrize("name", sorted(DATA["plans"]))
def test_a_plan_meets_every_need_in_order_and_keeps_every_core_notebook(name):
    """A notebook comes after what it needs, unless that is optional and left out (then it is linked online)."""
    plan = DATA["plans"][name]
    order = course.plan_notebooks(plan)
    assert len(order) == len(set(order))
    assert {n for n, e in NOTEBOOKS.items() if e["core"]} <= set(order)
    for index, number in enumerate(order):
        for need in NOTEBOOKS[number]["needs"]:
            assert need in order[:index] or (need not in order and not NOTEBOOKS[need]["core"]), (number, need)
    assert len(plan["lectures"]) == int(name)
    assert all(present <= 110 for present, _ in course.lecture_minutes(plan, NOTEBOOKS))


def test_the_readme_shows_the_map_of_course_yml():
    text = course.README.read_text()
    block = text[text.index(course.BEGIN) + len(course.BEGIN) : text.index(course.END)]
    assert block.strip() == course.markdown_map(DATA).strip(), "run: python slides/course.py --readme"


def test_every_reference_to_another_notebook_is_one_the_course_builder_rewrites():
    """A notebook number next to the word 'notebook' is inside a mention or a link that course.rewrite knows."""
    missed = []
    for number, cells in CELLS.items():
        for cell in cells:
            text = "".join(cell["source"])
            covered = set()
            for pattern in (course.MENTION, course.LINK):
                for match in pattern.finditer(text):
                    covered.update(range(match.start(), match.end()))
            for match in re.finditer(r"(?<![\d.$_^{])\b(0[1-9]|1[0-3])\b(?![.\d])", text):
                context = text[max(0, match.start() - 30) : match.end() + 10]
                if match.start() not in covered and re.search(r"[Nn]otebook|deck|lesson", context):
                    missed.append((number, context))
    assert missed == []


def _dangling(kept):
    found = []
    for number in sorted(kept):
        for cell in CELLS[number]:
            code = cell["cell_type"] == "code"
            text = course.rewrite("".join(cell["source"]), kept, DATA, code=code)
            found += [(number, d) for d in course.dangling(text, kept, DATA, code=code)]
    return found


def test_the_plans_and_any_other_part_of_the_series_leave_no_reference_dangling():
    random.seed(27)
    everything = sorted(NOTEBOOKS)
    parts = [set(course.plan_notebooks(plan)) for plan in DATA["plans"].values()]
    parts += [set(everything) - {n} for n in everything]
    parts += [set(random.sample(everything, k)) for k in (1, 2, 4, 6, 8, 10) for _ in range(3)]
    for kept in parts:
        assert _dangling(kept) == [], sorted(kept)


def test_without_rewriting_the_checker_finds_what_would_dangle():
    """The check can fail: the 3-lecture plan's notebooks, as they are, refer to ones it leaves out."""
    kept = set(course.plan_notebooks(DATA["plans"]["3"]))
    found = [
        d
        for n in kept
        for cell in CELLS[n]
        for d in course.dangling("".join(cell["source"]), kept, DATA, cell["cell_type"] == "code")
    ]
    assert len(found) >= 5


def test_a_course_links_what_it_left_out_online_and_ends_where_its_last_notebook_ends():
    kept = {"01", "03", "05"}
    closing = next("".join(c["source"]) for c in CELLS["05"] if "**Next:**" in "".join(c["source"]))
    text = closing + "\n\n" + "See notebooks 01–03 (the loop) and notebook-04 loops."
    rewritten = course.rewrite(text, kept, DATA)
    online = DATA["online"]
    assert f"[02]({online}02_feature_vectors.ipynb)" in rewritten
    assert f"notebook-[04]({online}04_bidirectional.ipynb) loops" in rewritten
    assert "this course ends here; the full series goes on with [06 · Stacked bidirectional layers]" in rewritten
    assert course.rewrite(text, set(NOTEBOOKS), DATA) == text
    comment = course.rewrite("# Notebook 02's layer", kept, DATA, code=True)
    assert comment == f"# Notebook 02's layer (notebook 02: {online}02_feature_vectors.ipynb)"
    assert (
        course.rewrite(
            "**Next:** [06 · Stacked bidirectional layers](06_stacked_bidirectional.ipynb): more", {"05", "07"}, DATA
        )
        == "**Next:** [07 · Batches and shapes](07_batches_and_shapes.ipynb)."
    )


def test_a_courses_glossary_links_what_the_course_left_out_online(tmp_path):
    """The pages beside the notebooks (the glossary links the notebook that introduces each term) are rewritten too."""
    kept = set(course.plan_notebooks(DATA["plans"]["3"]))
    assert course.build_course(kept, tmp_path, DATA) == []
    glossary = (tmp_path / "notebooks" / "glossary.md").read_text()
    assert f"({DATA['online']}12_gradients_through_time.ipynb" in glossary
    assert "(12_gradients_through_time.ipynb" not in glossary and "(10_lstm.ipynb" in glossary
    assert sorted(p.name[:2] for p in (tmp_path / "notebooks").glob("[0-9][0-9]_*.ipynb")) == sorted(kept)


def test_the_check_reads_a_mention_on_past_its_links():
    """'notebooks 01, [02](online), 03 and 05' is one mention: 03, left out and not linked, is found."""
    text = f"See notebooks 01, [02]({DATA['online']}02_feature_vectors.ipynb), 03 and 05."
    assert [d.endswith("(03)") for d in course.dangling(text, {"01", "05"}, DATA)] == [True]
    assert course.dangling(text, {"01", "03", "05"}, DATA) == []
