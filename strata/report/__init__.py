"""Reports from a run's own files: evaluation tables, training curves, config diffs, model cards.

Modules, one job each:
    schema          the evaluation JSON one evaluation (one seed, one split) writes
    eval_table      several seeds -> per-subtask table with mean ± std (Markdown, JSON)
    compare         several runs' tables side by side, on one task list only
    logs            metrics per step from verl's JSONL file logger or console log
    curve           validation success rate per step: table and PNG
    config_resolve  a saved config file or a Hydra config name + overrides -> flat resolved keys
    config_diff     differing keys, classified as infrastructure or algorithm/optimisation
    run_files       where a run keeps its config, logs and checkpoints
    model_card      the release README.md, written only from the above
    credit          GiGPO's advantages recomputed from a training dump alone
    markdown        the table helper they share

Command-line tools: ``strata report-eval``, ``strata compare``, ``strata curve``, ``strata config-diff``,
``strata model-card``.
"""
