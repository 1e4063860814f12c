"""The ``truco`` commands, one module each (or per group): each module's ``add(sub)`` adds its parser and
handler to the command line of :mod:`training.cli`, which holds only what every command shares (logging, the
exit codes of interrupts and errors, the extras to name)."""

from . import bench, bot, demo, diagnose, export, measure, play, replay, ship, train

#: In the order ``truco --help`` lists them.
COMMANDS = (demo, replay, play, train, ship, export, bench, measure, diagnose, bot)
