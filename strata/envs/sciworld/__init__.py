"""ScienceWorld (Wang et al., 2022) on its real simulator, behind the episode protocol of the ALFWorld pool.

The simulator is Scala in a jar, driven over py4j (`scienceworld` 1.2.3). Nothing here starts Java at import:
`engine` launches one JVM per worker process when the first engine is built.

    tasks     the 30 task types, the splits (train / valid = ScienceWorld's dev / test), game ids
    view      what the action prompt shows of the action space (objects in view, trimmed to a budget)
    engine    SciWorldEngine, SciWorldSession (what `strata.envs.worker` runs for ``engine="sciworld"``)
    prepare   task lists for the trainer from the simulator's variation splits
    policies  the random policy of `strata play` (random templates over the objects in view)
"""
