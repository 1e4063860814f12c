"""``truco leaks`` and ``truco probe``: why an agent wins or loses, where a win rate only says how often."""

from __future__ import annotations

import argparse
import sys

from training.cli.args import any_integer, positive_int
from truco_env.limits import one_line


def add(sub: argparse._SubParsersAction) -> None:
    """The diagnosing commands."""
    _add_leaks(sub)
    _add_probe(sub)


def _add_leaks(sub: argparse._SubParsersAction) -> None:
    """``truco leaks``."""
    leaks = sub.add_parser(
        "leaks",
        help="where one agent's points go against another, by how each hand's betting went",
        description=(
            "Play A against B on duplicate deals, put every hand in one category of how its betting went\n"
            "(no call; a hand at 11 played or run from; else the ladder calls with their callers, A or B,\n"
            "and how the hand ended: fold, mazo or shown) and print a Markdown table of the hands a match\n"
            "and A's net points a match in each category, worst first. Identical agents net zero between\n"
            "mirrored categories (A called first / B called first), so against a reference pairing (B\n"
            "against itself) a category far from its mirror is a leak to look at."
        ),
        epilog=("examples:\n"
                "  truco leaks --agents cfr:paulista heuristic --preset paulista --matches 2000\n"
                "  truco leaks --agents heuristic heuristic --preset paulista     # the reference pairing"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    leaks.add_argument("--agents", nargs=2, required=True, metavar=("A", "B"), help="the two agent specs")
    leaks.add_argument("--preset", required=True, metavar="NAME", help="rules preset")
    leaks.add_argument("--matches", type=positive_int, default=2000, metavar="N",
                       help="duplicate matches, even: N/2 deals x 2 seatings (default: 2000)")
    leaks.add_argument("--seed", type=any_integer, default=0, help="seed of the deals and agents (default: 0)")
    leaks.set_defaults(func=_cmd_leaks)


def _add_probe(sub: argparse._SubParsersAction) -> None:
    """``truco probe``."""
    probe = sub.add_parser(
        "probe",
        help="does a policy read its opponents? its refusals with the opponents' tally as it is and as in self-play",
        description=(
            "The answer probe. The policy (a network, greedy) plays OPPONENT on the vector environment;\n"
            "at each of its answers to a call it takes the policy's probability of refusing twice: with\n"
            "the observation as it is, and with the opponents' half of the match tally replaced by its\n"
            "mean over the policy's own self-play. A policy that reads the tally refuses differently;\n"
            "one that ignores it gives the same probability both ways. Prints the two as JSON."
        ),
        epilog=("examples:\n"
                "  truco probe --policy ppo:argentine --preset argentine --opponent random --answers 20000"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    probe.add_argument("--policy", required=True, metavar="SPEC",
                       help="a network: ppo:<preset> or ppo:PATH.safetensors")
    probe.add_argument("--preset", required=True, metavar="NAME", help="rules preset")
    probe.add_argument("--opponent", default="random", metavar="SPEC",
                       help="agent spec of the opponent (default: random)")
    probe.add_argument("--answers", type=positive_int, default=20000, metavar="N",
                       help="answers to a call to collect (default: 20,000)")
    probe.add_argument("--seed", type=any_integer, default=1, help="seed of the play (default: 1)")
    probe.set_defaults(func=_cmd_probe)


def _cmd_leaks(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from training.measure.leaks import leak_table

    try:
        count, net, rate = leak_table(args.preset, *args.agents, args.matches, args.seed)
    except ValueError as err:
        print(f"truco leaks: error: {one_line(err)}", file=sys.stderr)
        return 2
    m = args.matches
    print(f"{args.agents[0]} (A) vs {args.agents[1]} (B), {args.preset}, {m} duplicate matches: A wins {rate:.1%}")
    print("| category | hands a match | A's net points a match |\n|---|---:|---:|")
    for category in sorted(count, key=lambda c: net[c]):
        print(f"| {category} | {count[category] / m:.3f} | {net[category] / m:+.3f} |")
    print(f"| all | {sum(count.values()) / m:.3f} | {sum(net.values()) / m:+.3f} |")
    return 0


def _cmd_probe(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import json

    from training.measure.probes import answer_probe

    try:
        result = answer_probe(args.policy, args.preset, args.opponent, args.answers, args.seed)
    except ValueError as err:  # a policy file that is missing or corrupt included
        print(f"truco probe: error: {one_line(err)}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1))
    return 0
