#!/usr/bin/env python3
# critpath — libtrace/config/gen_config_doc.py
#
# Writes docs/configuration.md from the CRITPATH_* table, libtrace/config/flags.inc.
#
#   flags.inc --(compiled into config.cpp)--> render_markdown() --this script--> docs/
#
# There is one renderer, in C++ (config.cpp, render_markdown()), so the [config] unit test
# "docs/configuration.md is up to date" compares the committed file with exactly what this
# script writes. The script compiles flags.inc + config.cpp (standard library only) with a
# three-line driver and saves its output; it needs a C++20 compiler ($CXX, else c++/g++),
# not a configured build tree.
#
# Usage:
#   python3 libtrace/config/gen_config_doc.py            # rewrite docs/configuration.md
#   python3 libtrace/config/gen_config_doc.py --check    # exit 1 if the file is stale
#   python3 libtrace/config/gen_config_doc.py --stdout   # print instead of writing
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "configuration.md"
DRIVER = """\
#include <cstdio>
#include "libtrace/config/config.h"
int main() {
  const std::string doc = critpath::config::render_markdown();
  return doc.empty() || std::fwrite(doc.data(), 1, doc.size(), stdout) != doc.size();
}
"""


def find_compiler() -> str:
    for cand in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if cand and shutil.which(cand):
            return cand
    sys.exit("gen_config_doc.py: no C++ compiler found (set CXX)")


def render() -> str:
    cxx = find_compiler()
    with tempfile.TemporaryDirectory(prefix="critpath-gen-config-") as tmp:
        driver = Path(tmp) / "driver.cpp"
        exe = Path(tmp) / "render"
        driver.write_text(DRIVER)
        cmd = [cxx, "-std=c++20", "-O0", "-I", str(ROOT), str(driver),
               str(ROOT / "libtrace" / "config" / "config.cpp"), "-o", str(exe)]
        built = subprocess.run(cmd, capture_output=True, text=True)
        if built.returncode != 0:
            sys.stderr.write(built.stderr)
            sys.exit("gen_config_doc.py: compiling the renderer failed: " + " ".join(cmd))
        ran = subprocess.run([str(exe)], capture_output=True)
        if ran.returncode != 0:
            sys.exit("gen_config_doc.py: the renderer failed")
        return ran.stdout.decode("utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 if the committed file differs")
    ap.add_argument("--stdout", action="store_true", help="print the document")
    ap.add_argument("--output", type=Path, default=DOC, help="file to write or check")
    args = ap.parse_args()

    doc = render()
    if args.stdout:
        sys.stdout.write(doc)
        return 0
    current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
    if args.check:
        if current != doc:
            print(f"{args.output} is stale: run python3 libtrace/config/gen_config_doc.py",
                  file=sys.stderr)
            return 1
        return 0
    if current != doc:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(doc, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        print(f"{args.output} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
