"""An agent's whole life cycle through the JavaScript package's CLI, against the Python CLI.

- A Node-only agent follows the plan its `resume` prints: every command of the answer's
  `commands`, run as printed (VALUE replaced by a choice, the artifact written first), round
  after round; the Python CLI does the same with its own answers in a twin repository. The
  answers, every command's exit code and output, and the files at the end are the same.
- A scripted life cycle in text and in JSON: `init`, `session start` (kept, created, adopted,
  taken over), `ping`, `start`, `checkpoint`, `review-audit`, `finding add|resolve`,
  `decide`, `decide --log`, `transition`, `skip`, `complete`, `session end`, with the
  refusals an agent meets on the way (SR511 another session's live lease, SR512 a ping of
  another session's orphaned lease, SR514 no lease, SR711 an unknown step, SR161 no state,
  SR710/SR420 a review audit the workflow does not allow, SR183 a bad pid) and usage errors
  (exit 2): the same exit codes, output and files from both CLIs.

Node (>= 20) and ``npm ci`` are needed; SESSION_RESUME_NO_NODE=1 skips instead.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from helpers.jstwins import NEW_ID, batch, batch_in_both, need_node, tree

# Test tier (README "Test tiers"): Node and `npm ci`.
pytestmark = pytest.mark.node

PROJECT = ["--project", "demo"]
S1 = [*PROJECT, "--session", "s1"]


def _at(minute: int) -> list[str]:
    return ["--now", f"2026-03-02T{12 + minute // 60:02d}:{minute % 60:02d}:00Z"]


# --- following the plan resume prints ------------------------------------------------------


def _follow(impl: str, node: str, root: Path, rounds: int) -> list[object]:
    """``rounds`` times: `resume` (JSON), then each command it prints, run as printed with a
    fixed clock; what each answered (the repository's path as ROOT)."""
    (root / ".git").mkdir(parents=True)
    seen: list[object] = []

    def call(argvs: list[list[str]], minute: int) -> list[tuple[int, str, str]]:
        timed = [[*argv, *_at(minute + i)] for i, argv in enumerate(argvs)]
        outs = [
            (rc, out.replace(str(root), "ROOT"), err.replace(str(root), "ROOT"))
            for rc, out, err in batch(impl, node, timed, root)
        ]
        seen.extend(zip(argvs, outs, strict=True))
        return outs

    assert call([["init", "demo", "--session", "s1"]], 0)[0][0] == 0
    minute = 1
    for _ in range(rounds):
        resume = ["resume", "agent-output/demo", "--session", "s1", "--format", "json"]
        [(rc, out, _err)] = call([resume], minute)
        assert rc == 0
        commands = []
        for command in json.loads(out)["commands"]:
            words = shlex.split(command["run"])
            assert words[0] == "session-resume", command
            words = [f"choice-{words[2]}" if w == "VALUE" else w for w in words[1:]]
            for i, w in enumerate(words[:-1]):
                if w == "--artifact":  # the checkpoint's work wrote it
                    (root / words[i + 1]).parent.mkdir(parents=True, exist_ok=True)
                    (root / words[i + 1]).write_text("written by the step\n")
            commands.append(words)
        call(commands, minute + 1)
        minute += len(commands) + 1
    return seen


def test_a_node_only_agent_follows_the_plan_resume_prints(tmp_path: Path) -> None:
    node = need_node()
    runs = {impl: _follow(impl, node, tmp_path / impl, rounds=3) for impl in ("py", "js")}
    # The one difference the package's README states (Known limits): `approve` renders
    # 00-handoff.md in the reference only (the JavaScript package renders no handoff).
    rendered = re.compile(r"; rendered \S*00-handoff\.md")
    runs["py"] = [
        (argv, (out[0], rendered.sub("", out[1]), out[2]))  # type: ignore[index]
        for argv, out in runs["py"]
    ]
    assert runs["js"] == runs["py"]
    py_files = {k: v for k, v in tree(tmp_path / "py").items() if not k.endswith("00-handoff.md")}
    assert tree(tmp_path / "js") == py_files
    ran = [argv for argv, _ in runs["py"]]
    assert all(out[0] == 0 for _, out in runs["py"]), [x for x in runs["py"] if x[1][0]]  # type: ignore[index]
    verbs = {" ".join(argv[:2]) if argv[0] == "session" else argv[0] for argv in ran}
    assert {"session start", "session end", "start", "checkpoint", "review-audit"} <= verbs
    assert {"decide", "complete"} <= verbs
    # three rounds: step 1 done, then step 2 begun by the plan's own commands
    state = json.loads((tmp_path / "py" / "agent-output/demo/00-session-state.json").read_text())
    assert state["steps"]["1"]["status"] == "complete"
    assert state["review_audit"]["step_1"]["passes_executed"] == 2
    assert state["steps"]["2"]["status"] != "pending"


# --- a scripted life cycle, refusals and usage errors included ----------------------------

OK, REFUSED, USAGE = "ok", "refused", "usage"


def _files(root: Path) -> dict[str, str]:
    return {k: NEW_ID.sub("SID", json.dumps(v, sort_keys=True)) for k, v in tree(root).items()}


LIFE_CYCLE: list[tuple[str, list[str]]] = [
    (OK, ["init", "demo", "--session", "s1", *_at(0)]),
    (OK, ["session", "start", *S1, *_at(1)]),  # the session's own lease: kept
    (REFUSED, ["session", "start", *PROJECT, "--session", "s2", *_at(1)]),  # SR511
    (OK, ["ping", *S1, *_at(2)]),
    (REFUSED, ["ping", *PROJECT, *_at(2)]),  # SR511: names no session
    (OK, ["start", "1", *S1, *_at(3)]),
    (REFUSED, ["start", "99", *S1, *_at(3)]),  # SR711: no such step
    (REFUSED, ["start", "1", "--project", "other", "--session", "s1", *_at(3)]),  # SR161
    (OK, ["checkpoint", "1", "phase_1_discovery", *S1, *_at(4)]),
    (
        OK,
        [
            "review-audit",
            "1",
            "--complexity",
            "standard",
            "--passes-planned",
            "2",
            "--passes-executed",
            "1",
            "--skipped-pass",
            "2",
            "--skip-reason",
            "pass 2: 0 must_fix",
            "--model",
            "m1",
            *S1,
            *_at(5),
        ],
    ),
    (OK, ["review-audit", "1", "--model", "m1", "--model", "m2", *S1, *_at(5)]),  # appended
    (REFUSED, ["review-audit", "3", *S1, *_at(5)]),  # SR710: step 3 has no review
    (REFUSED, ["review-audit", "1", "--complexity", "huge", *S1, *_at(5)]),  # SR420
    (REFUSED, ["review-audit", "1", "--passes-planned", "1", *S1, *_at(5)]),  # SR710
    (REFUSED, ["review-audit", "1", "--passes-executed", "-1", *S1, *_at(5)]),  # SR710
    (OK, ["finding", "add", "Auth flow", *S1, *_at(6)]),
    (OK, ["finding", "resolve", "Auth flow", *S1, *_at(6)]),
    (OK, ["decide", "region", "westeurope", *S1, *_at(7)]),
    (OK, ["decide", "--log", "--title", "T", "--choice", "C", "--rationale", "R", *S1, *_at(7)]),
    (
        OK,
        [
            "transition",
            "--complete",
            "1",
            "--start",
            "2",
            "--decision",
            "compliance=GDPR",
            *S1,
            *_at(8),
        ],
    ),
    (OK, ["skip", "3", "--reason", "not needed", *S1, *_at(9)]),
    (OK, ["complete", "2", *S1, *_at(10)]),
    (USAGE, ["review-audit", *S1, *_at(11)]),
    (USAGE, ["review-audit", "2", "--passes-planned", "two", *S1, *_at(11)]),
    (USAGE, ["session", *S1, *_at(11)]),
    (USAGE, ["session", "stop", *S1, *_at(11)]),
    (USAGE, ["ping", "extra", *S1, *_at(11)]),
    (USAGE, ["session", "start", "--bogus", *S1, *_at(11)]),
    (USAGE, ["session", "start", "--pid", "x", *S1, *_at(11)]),
    (REFUSED, ["session", "start", "--pid", "0", *S1, *_at(11)]),  # SR183 (exit 2)
    (REFUSED, ["session", "end", *PROJECT, "--session", "s2", *_at(12)]),  # SR511
    (OK, ["session", "end", *S1, *_at(12)]),
    (OK, ["session", "end", *S1, *_at(12)]),  # no active session
    (REFUSED, ["ping", *S1, *_at(13)]),  # SR514: no lease
    (OK, ["session", "start", *PROJECT, "--session", "s3", "--owner", "ci-bot", *_at(14)]),
    (OK, ["session", "start", *PROJECT, "--session", "s4", "--takeover", *_at(15)]),
    (OK, ["ping", *PROJECT, "--session", "s4", *_at(16)]),
    (REFUSED, ["ping", *PROJECT, "--session", "s5", *_at(80)]),  # SR512: s4's lease is stale
    (OK, ["session", "start", *PROJECT, "--session", "s5", *_at(80)]),  # takes the orphan over
    (OK, ["session", "end", *PROJECT, "--session", "s5", *_at(81)]),
    # a lease taken by a write that named no session, adopted by `session start`
    (OK, ["init", "x", "--session-dir", "agent-output/x", *_at(82)]),
    (OK, ["session", "start", "--session-dir", "agent-output/x", "--session", "s9", *_at(83)]),
    (OK, ["ping", "--session-dir", "agent-output/x", "--session", "s9", *_at(84)]),
    (OK, ["session", "end", "--session-dir", "agent-output/x", "--session", "s9", *_at(85)]),
]

EXPECTED_CODES = {
    2: "SR511",
    4: "SR511",
    6: "SR711",
    7: "SR161",
    11: "SR710",
    12: "SR420",
    13: "SR710",
    14: "SR710",
    29: "SR183",
    30: "SR511",
    33: "SR514",
    37: "SR512",
}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_scripted_life_cycle_matches_python(fmt: str, tmp_path: Path) -> None:
    node = need_node()
    extra = ["--format", "json"] if fmt == "json" else []
    argvs = [[*argv, *extra] for _, argv in LIFE_CYCLE]
    outs = batch_in_both(argvs, tmp_path, node, new_ids=True)
    py, js = outs["py"], outs["js"]
    for i, (kind, argv) in enumerate(LIFE_CYCLE):
        if kind == USAGE:
            # argparse's usage text and the JavaScript CLI's differ in words; both refuse
            # before anything runs, on standard error, exit 2
            for rc, out, err in (py[i], js[i]):
                assert (rc, out) == (2, "") and err, (argv, rc, out, err)
        else:
            assert js[i] == py[i], argv
    rcs = [rc for rc, _, _ in py]
    assert rcs == [
        {OK: 0, USAGE: 2}.get(kind, 2 if i == 29 else 1) for i, (kind, _) in enumerate(LIFE_CYCLE)
    ]
    for i, code in EXPECTED_CODES.items():
        where = py[i][1] if fmt == "json" else py[i][2]
        assert code in where, (LIFE_CYCLE[i][1], where)
        if fmt == "json":
            assert json.loads(py[i][1])["ok"] is False
    # the files, the id of the lease a write that named no session took as SID
    assert _files(tmp_path / "js") == _files(tmp_path / "py")
    files = tree(tmp_path / "py")
    assert "agent-output/other/00-session-state.json" not in files  # refused: nothing written
    assert "agent-output/demo/00-session.active" not in files  # the last session ended
    state = files["agent-output/demo/00-session-state.json"]
    assert isinstance(state, dict)
    assert state["review_audit"]["step_1"] == {
        "complexity": "standard",
        "passes_planned": 2,
        "passes_executed": 1,
        "skipped": [2],
        "skip_reasons": ["pass 2: 0 must_fix"],
        "models_used": ["m1", "m2"],
    }
    worklog = [
        json.loads(line) for line in str(files["agent-output/demo/00-worklog.jsonl"]).splitlines()
    ]
    assert [e["session"] for e in worklog if e["event"] == "takeover"] == ["s4", "s5"]
    assert "s2" not in {e["session"] for e in worklog}  # every write of s2 was refused
    if fmt == "json":
        answers = {i: json.loads(py[i][1]) for i in (1, 3, 32, 34, 35, 38, 41)}
        assert [answers[i]["action"] for i in sorted(answers)] == [
            "kept",
            "refreshed",
            "none",
            "created",
            "takeover",
            "takeover",
            "adopted",
        ]
        assert answers[35]["previous_session"] == "s3"
        assert answers[34]["lease"]["owner"] == "ci-bot"
        assert answers[38]["events"][0]["detail"]["orphaned"] is True
    else:
        assert py[1][1] == "s1\n" and py[3][1] == "session s1: heartbeat 2026-03-02T12:02:00Z\n"
        assert py[9][1].startswith("review audit of step 1 (Requirements): 1 of 2 passes run")
        assert "took over the lease of session s3" in py[35][2]
        assert "took over the lease of session s4" in py[38][2]
        assert "adopted the lease of session" in py[41][2]


# --- hostile and missing session directories -------------------------------------------------

HOSTILE: list[list[str]] = [
    ["init", "demo", "--session", "s1", *_at(0)],  # agent-output leads out: SR105
    ["session", "start", *S1, *_at(1)],  # SR105, nothing created where the link leads
    ["session", "start", "--session-dir", "../outside", "--session", "s1", *_at(2)],  # SR100
    ["ping", "--session-dir", "../outside", "--session", "s1", "--format", "json", *_at(3)],
    ["session", "end", "--session-dir", "../outside", *_at(4)],
    ["review-audit", "1", "--session-dir", "../outside", "--session", "s1", *_at(5)],
]


def test_hostile_and_missing_session_dirs_match_python(tmp_path: Path) -> None:
    """A session directory under a link that leads out of the repository (to a decoy) is
    refused (SR105) before anything is created there; a `--session-dir` that does not exist is
    SR100 (exit 2), not created: the same answers from both CLIs, the decoy left empty."""
    node = need_node()
    decoys = {}
    for impl in ("py", "js"):
        (tmp_path / impl / ".git").mkdir(parents=True)
        decoys[impl] = tmp_path / f"decoy-{impl}"
        decoys[impl].mkdir()
        (tmp_path / impl / "agent-output").symlink_to(decoys[impl])
    outs = batch_in_both(HOSTILE, tmp_path, node)
    decoy_words = {
        impl: [x.replace(f"decoy-{impl}", "DECOY") for x in map(str, o)] for impl, o in outs.items()
    }
    assert decoy_words["js"] == decoy_words["py"]
    assert [rc for rc, _, _ in outs["py"]] == [1, 1, 2, 2, 2, 2]
    assert all("SR105" in err for _, _, err in outs["py"][:2])
    assert all("SR100" in err for _, _, err in outs["py"][2:])
    for impl in ("py", "js"):
        assert list(decoys[impl].iterdir()) == []
        assert sorted(p.name for p in tmp_path.iterdir()) == ["decoy-js", "decoy-py", "js", "py"]
