"""ALFWorld on its real engine (alfworld 0.4.2's textworld games): the engine and its episode, the task types and
splits, the games of a split on disk, scripted policies, and the offline generator with the bundled game set."""
