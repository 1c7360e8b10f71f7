"""Every notebook keeps the series' promises: structure, stored outputs, slides, strictness.

nbval (make nbval) re-runs the notebooks and compares outputs; these tests check what nbval
cannot: that outputs were stored from a clean top-to-bottom run, and that each notebook has
the parts a lesson needs.
"""

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SLIDE_TYPES = {"slide", "subslide", "fragment", "-", "skip", "notes"}


def load(path):
    return nbformat.read(path, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def markdown(nb):
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_notebooks_are_numbered_without_gaps_and_listed_in_the_readme():
    """01, 02, ... with no gap, and README's table names each one."""
    assert NOTEBOOKS, "no notebooks found"
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert numbers == list(range(1, len(NOTEBOOKS) + 1))
    readme = (ROOT / "README.md").read_text()
    for path in NOTEBOOKS:
        assert f"notebooks/{path.name}" in readme, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_the_parts_of_a_lesson(path):
    """Title, objectives, an equation, predict-then-run, a misconception, summary, exercises."""
    nb = load(path)
    nbformat.validate(nb)
    title = nb.cells[0].source.splitlines()[0]
    assert re.fullmatch(rf"# {path.name[:2]} · .+", title), title
    text = markdown(nb)
    for part in ("Learning objectives", "$$", "Predict", "Misconception", "## Summary", "## Exercises"):
        assert part in text, f"{path.name} lacks {part!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_are_stored_from_one_clean_run(path):
    """Code cells ran once each, in order; no stray errors, addresses, or relaxed checks."""
    nb = load(path)
    assert nb.metadata.kernelspec.name == "python3"
    cells = [c for c in code_cells(nb) if c.source.strip()]
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1)), "re-run with make execute"
    for cell in cells:
        first_line = cell.source.splitlines()[0]
        assert first_line.startswith("#"), f"code cell should open with a comment: {first_line!r}"
        assert "NBVAL_IGNORE_OUTPUT" not in cell.source and "NBVAL_SKIP" not in cell.source
        if "NBVAL_RAISES_EXCEPTION" in cell.source:  # else `make execute` stops at this cell
            assert "raises-exception" in cell.metadata.get("tags", []), first_line
        for output in cell.outputs:
            if output.output_type == "error":
                assert "NBVAL_RAISES_EXCEPTION" in cell.source, f"unexpected error in: {first_line}"
            plain = json.dumps(output.get("data", {}).get("text/plain", "")) + output.get("text", "")
            assert not re.search(r" at 0x[0-9a-f]+", plain), f"a memory address is stored in: {first_line}"
        streams = [
            (a.name, b.name)
            for a, b in zip(cell.outputs, cell.outputs[1:])
            if a.output_type == b.output_type == "stream"
        ]
        assert all(x != y for x, y in streams), f"printed text stored in chunks (make execute joins them): {first_line}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_proves_its_result_against_torch(path):
    """At least one helpers.compare line reports a match with torch."""
    outputs = "".join(o.get("text", "") for c in code_cells(load(path)) for o in c.outputs)
    assert "✓" in outputs and "match" in outputs


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_carries_slide_metadata(path):
    """Each cell says how it presents (slide, subslide, fragment, -, skip or notes)."""
    for cell in load(path).cells:
        slide_type = cell.metadata.get("slideshow", {}).get("slide_type")
        assert slide_type in SLIDE_TYPES, f"{path.name}: {cell.source[:40]!r} has slide_type {slide_type!r}"


# A prompt to predict before running: "*Predict:*", "## Predict, then run: …", "Predict it, then check".
PROMPT = re.compile(r"(?<![A-Za-z])Predict\b")
NEW_CLICK = {"slide", "subslide", "fragment"}  # a cell that a deck shows only on a later click


def prompts_answered_on_their_click(cells):
    """The prompts (their cell numbers) whose answer, the first code cell after them, a deck shows
    on the prompt's own click: no cell from the prompt to that code cell starts a slide, a subslide
    or a fragment (notes and skipped cells are not on the slide)."""
    shown = []
    for number, cell in enumerate(cells):
        if cell.cell_type != "markdown" or not PROMPT.search(cell.source):
            continue
        following = cells[number + 1 :]
        answer = next((k for k, later in enumerate(following) if later.cell_type == "code"), None)
        if answer is None:
            continue
        kinds = [later.metadata.get("slideshow", {}).get("slide_type", "-") for later in following[: answer + 1]]
        if not NEW_CLICK & set(kinds):
            shown.append(number)
    return shown


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_predict_prompt_keeps_its_answer_for_a_later_click(path):
    """The code that answers a "Predict" prompt (and its output, and what follows) comes on a
    later click of the deck than the prompt; in the notebook it comes after the prompt."""
    cells = load(path).cells
    assert any(PROMPT.search(cell.source) for cell in cells if cell.cell_type == "markdown"), f"{path.name}: no prompt"
    shown = prompts_answered_on_their_click(cells)
    assert not shown, f"{path.name}: prompts shown with their answer: {[cells[k].source[:60] for k in shown]}"


def test_the_prompt_check_flags_an_answer_on_the_same_click():
    """The check itself: a code cell continuing the prompt's slide fails it, a fragment passes."""
    prompt = nbformat.v4.new_markdown_cell("*Predict:* the shape?", metadata={"slideshow": {"slide_type": "slide"}})
    notes = nbformat.v4.new_markdown_cell("Say why.", metadata={"slideshow": {"slide_type": "notes"}})
    answer = nbformat.v4.new_code_cell("x.shape", metadata={"slideshow": {"slide_type": "-"}})
    assert prompts_answered_on_their_click([prompt, notes, answer]) == [0]
    answer.metadata.slideshow.slide_type = "fragment"
    assert prompts_answered_on_their_click([prompt, notes, answer]) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_only_the_set_up_cell_is_left_out_of_the_deck(path):
    """Every cell but the set-up (imports and seeds, the first code cell) is on a slide or in the notes; none is empty."""
    cells = load(path).cells
    skipped = [i for i, cell in enumerate(cells) if cell.metadata.get("slideshow", {}).get("slide_type") == "skip"]
    setup = next(i for i, cell in enumerate(cells) if cell.cell_type == "code")
    assert "import" in cells[setup].source, f"{path.name}: the first code cell (cell {setup}) is not the set-up"
    assert skipped == [setup], f"{path.name}: cells {skipped} are Skip; only the set-up cell ({setup}) may be"
    empty = [i for i, cell in enumerate(cells) if not cell.source.strip()]
    assert not empty, f"{path.name}: cells {empty} are empty"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_ends_with_2_to_4_checked_exercises_all_registered(path):
    """The Exercises section numbers 2-4 exercises; its checks and helpers.solutions name the same keys."""
    from helpers import exercises

    nb = load(path)
    number = path.name[:2]
    assert "## Exercises" in markdown(nb), f"{path.name} has no Exercises section"
    section = markdown(nb).split("## Exercises")[-1]
    assert 2 <= len(re.findall(r"^\*\*\d+\. ", section, flags=re.M)) <= 4, f"{path.name}: 2-4 exercises"
    code = "\n".join(c.source for c in code_cells(nb))
    checked = re.findall(r'helpers\.exercises\.check(?:_code)?\("([^"]+)"', code)
    registered = sorted(key for key in exercises.exercises() if key.startswith(f"{number}."))
    assert checked, f"{path.name} checks no exercise"
    assert sorted(checked) == registered, f"{path.name} checks {sorted(checked)}; helpers.solutions has {registered}"


# Labels that name no source a student can open: the project's own file names for its source
# material, and attributions nobody can follow. Cite a public source or state the mistake plainly.
UNOPENABLE = re.compile(
    r"\bseeds?[ _-]?0\d\d\b|popular tutorial|a tutorial that|the tutorial's|some tutorials|shared online"
    r"|the original paper|\bone tutorial\b",
    re.IGNORECASE,
)


def test_nothing_a_student_reads_names_a_source_they_cannot_open():
    """Notebooks (prose, code, outputs), README, docs and exercise hints carry no internal labels."""
    texts = {path.name: path.read_text() for path in NOTEBOOKS}
    texts["README.md"] = (ROOT / "README.md").read_text()
    for path in [*(ROOT / "notebooks").glob("*.md"), *(ROOT / "helpers").rglob("*.py")]:
        texts[str(path.relative_to(ROOT))] = path.read_text()
    found = {name: sorted(set(UNOPENABLE.findall(text))) for name, text in texts.items()}
    assert not {name: hits for name, hits in found.items() if hits}


@pytest.mark.parametrize("path", NOTEBOOKS[:-1], ids=lambda p: p.name[:2])
def test_next_is_a_link_to_the_next_notebook_under_its_title(path):
    """The summary's "Next:" links the next notebook by its file name, with its own title."""
    following = NOTEBOOKS[NOTEBOOKS.index(path) + 1]
    title = load(following).cells[0].source.splitlines()[0].removeprefix("# ")
    assert f"**Next:** [{title}]({following.name})" in markdown(load(path))


def test_study_times_agree_between_readme_notebooks_and_the_estimate(script):
    """Each notebook's "About N minutes" is README's number, and within 5 of benchmarks/study_time.py."""
    estimates = script("benchmarks/study_time.py").estimates()
    readme = (ROOT / "README.md").read_text()
    for path in NOTEBOOKS:
        stated = int(re.search(r"\*About (\d+) minutes", load(path).cells[0].source).group(1))
        assert re.search(rf"\(notebooks/{path.name}\) \|[^\n]*\| {stated} min \|", readme), path.name
        assert abs(stated - estimates[path.name]) <= 5, (path.name, stated, estimates[path.name])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_first_cell_links_the_glossary_and_the_shape_cheat_sheet(path):
    """Every notebook opens with links to glossary.md and shapes.md, which sit beside it."""
    first = load(path).cells[0].source
    for target in ("glossary.md", "shapes.md"):
        assert f"]({target})" in first, f"{path.name} does not link {target}"
        assert (path.parent / target).resolve().is_file(), target


WRITE_IT_YOURSELF = {"01", "02", "03", "04", "05", "06", "08", "10", "11", "12", "13"}  # at least these notebooks


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_write_it_yourself_exercises_hold_a_stub_that_reads_not_written_yet(path):
    """A 'Write it yourself' slide before the summary: a stub function whose stored check reads 'not written yet'."""
    nb = load(path)
    cells = [c for c in nb.cells if "check_code(" in c.source and c.cell_type == "code"]
    if path.name[:2] not in WRITE_IT_YOURSELF and not cells:
        return
    assert cells, f"{path.name} has no write-it-yourself exercise (helpers.exercises.check_code)"
    headings = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## ")]
    assert any(h.startswith("## Write it yourself") for h in headings), f"{path.name}: no '## Write it yourself' slide"
    first = next(i for i, h in enumerate(headings) if h.startswith("## Write it yourself"))
    assert headings.index("## Summary") > first, f"{path.name}: 'Write it yourself' belongs before the summary"
    for cell in cells:
        assert re.search(r"^def \w+\(.*\):\n(    .*\n)*    \.\.\.", cell.source, flags=re.M), f"{path.name}: no stub"
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert re.fullmatch(r"(… \S+: not written yet \(\w+ returns None\)\. [^\n]*\n)+", text), text


def test_deck_code_cells_stay_short():
    """A code cell on a slide is 14 lines at most (a class, which one cell must hold whole, excepted), and the
    cells of 13 or 14 lines are no more than 26 (33 cells were over 12 before the instructor's review, up to
    20 lines): lower the number whenever one is split."""
    long = []
    for path in NOTEBOOKS:
        for index, cell in enumerate(load(path).cells):
            if cell.cell_type != "code" or cell.metadata.get("slideshow", {}).get("slide_type") in ("skip", "notes"):
                continue
            lines = cell.source.rstrip("\n").split("\n")
            code = [line for line in lines if line.strip() and not line.startswith("#")]
            if len(lines) > 14:
                assert code and code[0].startswith("class "), f"{path.name} cell {index}: {len(lines)} lines"
            elif len(lines) > 12:
                long.append((path.name, index, len(lines)))
    assert len(long) <= 26, long
