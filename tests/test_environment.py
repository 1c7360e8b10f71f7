"""requirements.txt and environment.yml describe the same environment, and the venv has it."""

import re
from importlib.metadata import version
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def requirements():
    """{name: version} from requirements.txt (every line is an exact pin)."""
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, pinned = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][0-9A-Za-z.+]*)", line).groups()
            pins[name.lower()] = pinned
    return pins


def environment():
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def test_every_requirement_is_an_exact_pin_including_torch_2_13():
    """Exact pins keep stored notebook outputs reproducible; torch stays at 2.13.0."""
    pins = requirements()
    assert pins["torch"] == "2.13.0"
    for name in (
        "jupyterlab",
        "ipywidgets",
        "matplotlib",
        "nbval",
        "ipykernel",
        "pytest",
        "pytest-xdist",
        "hypothesis",
    ):
        assert name in pins, name


def test_environment_yml_pins_the_same_packages_as_requirements_txt():
    """environment.yml's pip section lists exactly requirements.txt's pins, plus helpers itself."""
    env = environment()
    assert env["channels"] == ["conda-forge"]
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in conda and "pip" in conda
    (pip_section,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    pins = {}
    for line in pip_section:
        if line.startswith("-"):  # pip options: the CPU wheel index, the editable helpers
            continue
        name, pinned = line.split("==")
        pins[name.lower()] = pinned
    assert pins == requirements()
    assert "-e ." in pip_section


def test_the_installed_packages_are_the_pinned_ones():
    """The venv the tests run in holds the pinned versions (torch's +cpu build counts)."""
    for name, pinned in requirements().items():
        assert version(name).split("+")[0] == pinned, name


def test_jupyterlab_loads_no_extension_that_students_do_not_get():
    """otter-grader's jupytext and ipylab are installed for make release; make setup turns their JupyterLab parts off."""
    import json
    import sys

    prefix = Path(sys.prefix) / "etc" / "jupyter"
    disabled = json.loads((prefix / "labconfig" / "page_config.json").read_text()).get("disabledExtensions", {})
    assert disabled.get("jupyterlab-jupytext") and disabled.get("ipylab"), disabled
    server = json.loads((prefix / "jupyter_server_config.d" / "rnns-by-hand.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"] == {"jupyterlab_jupytext": False}
    setting = [  # files that set it: ours must be read last (the folder is read in name order)
        path.name
        for path in sorted((prefix / "jupyter_server_config.d").glob("*.json"))
        if "jupyterlab_jupytext" in json.loads(path.read_text()).get("ServerApp", {}).get("jpserver_extensions", {})
    ]
    assert setting[-1] == "rnns-by-hand.json", setting


def test_the_wheel_is_built_with_the_pinned_setuptools():
    """pyproject.toml's build requirements are exact pins, the same as requirements.txt's (an isolated build uses them)."""
    import tomllib

    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    pins = requirements()
    assert build and all("==" in requirement for requirement in build)
    for requirement in build:
        name, pinned = requirement.split("==")
        assert pins[name] == pinned, (
            f"pyproject.toml builds with {requirement}; requirements.txt pins {name}=={pins[name]}"
        )
