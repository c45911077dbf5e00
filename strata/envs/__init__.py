"""The environment layer: games on their real engines, played in worker processes, with the same shape for each.

One package per environment, with the same small set of modules where it has the part::

    alfworld/   engine (AlfworldEngine, GameSession), tasks (task types, subtasks, splits, task rules),
                discovery (games of a split on disk), prepare (task lists), policies (random), explorer,
                bundled (the small generated set for tests and the demo), gen/ (the offline game generator)
    sciworld/   engine, tasks, prepare, policies, view (objects and actions in an observation)
    webshop/    engine, tasks, prepare, policies (gold and random shoppers), site, search, catalog, generate
    magic_word/ game (the one-decision toy of the learning check)

and what every environment shares, here at the root:

    registry    environment name -> where its parts live (the only place that names them; docs/adding-an-environment.md)
    tasks       Task, a game of any registered environment
    session     EpisodeSession: the step cap, action normalisation and end reasons, written once
    pool        EnvPool, PooledEpisode: async episodes in worker processes (worker, protocol: their side)
    records     StepResult, EpisodeStart, EpisodeOutcome (what crosses the process boundary)
    task_list   write_task_list / read_task_list (the trainer's parquet files)
    metrics     success_table (overall and per subtask), end_reasons
    actions     match_command (an action as people write it -> the admissible command it means)
    policies    the scripted policies of `strata play` (walkthrough, gold, random)
    commands/   the `strata` tools of this layer: make-games, make-webshop, prepare-data, play

Nothing here imports verl or Ray, and importing a module imports no engine (textworld, alfworld, ScienceWorld's
JVM): worker processes and the generator load them when they need them.
"""
