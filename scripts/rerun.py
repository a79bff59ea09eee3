#!/usr/bin/env python3
"""Execute the chapters with papermill into a run folder: see :mod:`accessibility_lib.runs.rerun`."""

from accessibility_lib.runs.rerun import main

if __name__ == "__main__":
    raise SystemExit(main())
