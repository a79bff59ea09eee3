#!/usr/bin/env python3
"""Build the site from a run folder of executed notebooks: see :mod:`accessibility_lib.runs.publish`."""

from accessibility_lib.runs.publish import main

if __name__ == "__main__":
    raise SystemExit(main())
