"""Packaging for CAREBench, driven by settings.ini (nbdev 2 layout).

No pkg_resources import (gone from current setuptools); classifiers are passed explicitly.
"""
from configparser import ConfigParser
from pathlib import Path

import setuptools
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
cfg = ConfigParser(delimiters=["="])
cfg.read(HERE / "settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

licenses = {"apache2": ("Apache Software License 2.0", "OSI Approved :: Apache Software License")}
statuses = ["1 - Planning", "2 - Pre-Alpha", "3 - Alpha", "4 - Beta", "5 - Production/Stable", "6 - Mature", "7 - Inactive"]
py_versions = ["3.10", "3.11", "3.12", "3.13"]
lic = licenses[cfg["license"]]
min_python = cfg["min_python"]


def builtin_tracks():
    "One entry point per room of carebench/tracks/ (a folder holding track.py): a new built-in track is its folder."
    return [f"{p.parent.name}=carebench.tracks.{p.parent.name}.track"
            for p in sorted((HERE / "carebench" / "tracks").glob("*/track.py"))]


SHIPPED = ["reports/*.ipynb", "_quarto.yml", "data/example/*"]   # checkout files a wheel carries in carebench/_shipped


class build_py_with_shipped(build_py):
    "build_py that also copies the shared report templates, the site settings and the bundled example into the package."
    def run(self):
        super().run()
        for pattern in SHIPPED:
            for f in sorted(HERE.glob(pattern)):
                if not f.is_file(): continue
                dest = Path(self.build_lib) / "carebench" / "_shipped" / f.relative_to(HERE)
                self.mkpath(str(dest.parent)); self.copy_file(str(f), str(dest))


def reqs(key):
    return cfg.get(key, "").split()


setuptools.setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license=lic[0],
    url=cfg["git_url"],
    keywords=cfg["keywords"],
    classifiers=[
        "Development Status :: " + statuses[int(cfg["status"]) - 1],
        "Intended Audience :: " + cfg["audience"],
        "License :: " + lic[1],
        "Natural Language :: " + cfg["language"],
        "Topic :: Scientific/Engineering :: Medical Science Apps.",
    ] + ["Programming Language :: Python :: " + v for v in py_versions[py_versions.index(min_python):]],
    packages=setuptools.find_packages(include=["carebench*"]),
    include_package_data=True,
    package_data={"carebench": ["tracks/*/*.ipynb"]},      # each track's report page templates, in its room
    python_requires=">=" + min_python,
    install_requires=reqs("requirements"),
    extras_require={
        "ml": ["torch>=2.4"] + reqs("ml_requirements"),
        "dev": reqs("dev_requirements"),
        "formats": reqs("formats_requirements"),     # the FHIR and OMOP adapters (fhir.resources, SQLAlchemy, DuckDB)
        "vllm": ["vllm"],
    },
    # the built-in tracks (each room of carebench/tracks/), found by the config loader like any other package's tracks
    entry_points={"console_scripts": cfg["console_scripts"].split(),
                  "carebench.tracks": builtin_tracks(),
                  "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    cmdclass={"build_py": build_py_with_shipped},
    zip_safe=False,
)
