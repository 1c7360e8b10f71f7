"""Build step that pyproject.toml cannot say: the reference pages beside the notebooks also go into the wheel.

notebooks/glossary.md and notebooks/shapes.md stay where the notebooks' links find them; a copy goes into
helpers/docs/ of the built package, where helpers.glossary() and helpers.shape_sheet() read them when a
notebook is opened without its folder (Colab, Kaggle). MANIFEST.in puts the two files into the sdist.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PAGES = ["notebooks/glossary.md", "notebooks/shapes.md"]


class BuildWithPages(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "helpers" / "docs"
        self.mkpath(str(target))
        for page in PAGES:
            self.copy_file(page, str(target / Path(page).name))


setup(cmdclass={"build_py": BuildWithPages})
