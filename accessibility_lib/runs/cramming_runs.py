"""Real-model cramming runs: the names chapters and scripts import, from the modules that hold them.

Units, plans and the function that runs a unit live in :mod:`accessibility_lib.runs.cramming_units`; the
artifacts (``book/data/cramming/<model>.json``), their re-fits and summaries in
:mod:`accessibility_lib.runs.cramming_artifacts`. Produced by ``scripts/real_model_cramming.py``.
"""

from __future__ import annotations

from accessibility_lib.runs.cramming_artifacts import (  # noqa: F401
    ARTIFACT_DIR,
    FORMAT,
    ArtifactMissingError,
    UnitSummary,
    artifact_path,
    finite_or_none,
    git_commit,
    import_artifact,
    load_artifact,
    machine_text,
    now_utc,
    refit_unit,
    slopes,
    summarize,
    unit_outcomes,
    unit_record,
    upgrade,
    write_artifact,
)
from accessibility_lib.runs.cramming_units import BASE_STEPS, PLANS, Unit, plan_units, run_cramming_unit, unit_settings  # noqa: F401
