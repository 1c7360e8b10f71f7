"""make present: write config/presenting.json as JupyterLab user settings into a folder of their own.

    python tools/present_settings.py build/present/settings

JupyterLab then starts with JUPYTERLAB_SETTINGS_DIR set to that folder: the presenter's larger text, wrapped code
lines and readable controls, without touching the settings of the person's own JupyterLab. Changes made in
JupyterLab while presenting (Settings ▸ Theme ▸ font sizes) stay in that folder for the next `make present`.
"""

import json
import sys
from pathlib import Path

PRESENTING = Path(__file__).resolve().parent.parent / "config" / "presenting.json"


def main(folder):
    for plugin, values in json.loads(PRESENTING.read_text()).items():
        package, name = plugin.split(":")
        path = Path(folder) / package / f"{name}.jupyterlab-settings"
        if not path.exists():  # what the presenter changed last time stays
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
