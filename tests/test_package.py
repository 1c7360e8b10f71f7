"""The package as a student installs it (`pip install rnns-by-hand`, or the wheel on a hub): built, then read.

The wheel is built the way a publisher builds it (`python -m build`: an sdist, then a wheel from that sdist),
without build isolation so the test needs no network (requirements.txt pins setuptools and build).
"""

import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """A folder holding the sdist and the wheel, built from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)]
    subprocess.run(build, check=True, capture_output=True, text=True)
    return out


@pytest.fixture(scope="module")
def wheel(dist):
    (path,) = dist.glob("*.whl")
    return path


def source_files():
    """Every file of helpers/ in the source tree, as a path inside the wheel (caches left out)."""
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "helpers").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_wheel_holds_every_file_of_helpers_and_nothing_else_of_the_checkout(wheel):
    """Package discovery cannot drop a module, a subpackage or a data file: the wheel's helpers/ is the tree's,
    plus the reference pages."""
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    # setup.py adds the reference pages that sit beside the notebooks, unchanged.
    pages = {f"helpers/docs/{page}": ROOT / "notebooks" / page for page in ("glossary.md", "shapes.md")}
    assert {name for name in names if name.startswith("helpers/")} == source_files() | set(pages)
    for name, source in pages.items():
        assert archive.read(name).decode() == source.read_text(), f"{name} differs from {source}"
    assert {"helpers/solutions/__init__.py", "helpers/solutions/text_to_predictions.py"} <= names
    others = {name.split("/")[0] for name in names if not name.startswith("helpers/")}
    assert others == {wheel.name.split("-")[0] + "-" + PYPROJECT["project"]["version"] + ".dist-info"}


def test_the_metadata_names_the_licences_the_tested_torch_range_and_where_the_project_lives(wheel):
    """METADATA: name, version, Python, SPDX licence and both licence files, torch's lower bound, URLs."""
    dist_info = f"rnns_by_hand-{PYPROJECT['project']['version']}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        metadata = Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())
        names = set(archive.namelist())
    assert metadata["Name"] == "rnns-by-hand" and metadata["Version"] == PYPROJECT["project"]["version"]
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["License-Expression"] == "MIT AND CC-BY-4.0"
    assert set(metadata.get_all("License-File")) == {"LICENSE", "LICENSE-CC-BY-4.0"}
    assert {f"{dist_info}/licenses/LICENSE", f"{dist_info}/licenses/LICENSE-CC-BY-4.0"} <= names
    requires = metadata.get_all("Requires-Dist")
    assert "torch>=2.2.2" in requires and {"numpy", "matplotlib", "ipywidgets"} <= set(requires)
    # README states the tested range from the same lower bound (make compat tests it).
    assert "Tested on torch 2.2.2 to" in re.sub(r"\s+", " ", (ROOT / "README.md").read_text())
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
    assert set(urls) == {"Homepage", "Source", "Issues"}
    assert all(url.startswith("https://") for url in urls.values())


def test_the_licence_files_hold_the_mit_and_cc_by_4_0_texts():
    """LICENSE is the MIT licence; LICENSE-CC-BY-4.0 is Creative Commons' legal code, whole."""
    mit = (ROOT / "LICENSE").read_text()
    assert mit.startswith("MIT License\n\nCopyright (c) ") and 'THE SOFTWARE IS PROVIDED "AS IS"' in mit
    cc = (ROOT / "LICENSE-CC-BY-4.0").read_text()
    assert cc.startswith("Creative Commons Attribution 4.0 International")
    assert "Section 8 – Interpretation." in cc and cc.rstrip().endswith(
        "Creative Commons may be contacted at creativecommons.org."
    )


def test_twine_check_accepts_the_sdist_and_the_wheel(dist):
    """What PyPI would refuse (bad metadata, a README it cannot render) fails here first."""
    files = sorted(str(path) for path in dist.iterdir())
    assert len(files) == 2
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_helpers_and_every_solution_import_from_the_wheel_alone(wheel, tmp_path):
    """Unpacked and first on the path (not this checkout), the wheel imports helpers, its solutions and its pages."""
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    code = (
        "import helpers, helpers.exercises as e; print(helpers.__file__); "
        "print(sorted(e.BY_KEY)[:1], len(e.BY_KEY)); "
        "from helpers import pages; print(len(pages._entries()), pages._read('shapes.md').splitlines()[0])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    where, keys, reference = result.stdout.splitlines()
    assert where == str(tmp_path / "site" / "helpers" / "__init__.py")
    assert int(keys.split()[-1]) >= 58
    # No repository around it: the glossary and the shape sheet come from the wheel's own copies.
    assert int(reference.split()[0]) >= 60
    assert reference.endswith("# Shape cheat sheet: `nn.RNN`, `nn.LSTM`, `nn.GRU`")
