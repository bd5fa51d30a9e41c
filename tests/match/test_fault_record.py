"""What a fault keeps and how it is told: the escaped output, the JSON round trip, the one fault line."""

from __future__ import annotations

from referee.match.types import OUTPUT_CAP, Fault, FaultReason, escape_output, fault_line


def test_output_is_escaped_and_capped():
    assert escape_output(b'{"a":"\\u00e9"}\tx\r\n\x1b\xff') == '{"a":"\\u00e9"}\\tx\\r\\n\\x1b\\xff'
    assert escape_output("é".encode()) == "é"  # UTF-8 stays readable
    assert escape_output(b"y" * (OUTPUT_CAP + 10)) == "y" * OUTPUT_CAP


def test_a_fault_with_its_request_survives_json_and_one_without_is_written_as_before():
    full = Fault(1, FaultReason.INVALID_ACTION, "'x' is not an action of this game", ("tail",), request=7,
                 legal=("AS", "KS"), output='{"action":"x"}', output_bytes=14, deal=2)
    assert Fault.from_json(full.to_json()) == full
    assert full.to_json()["legal"] == ["AS", "KS"] and "turn" not in full.to_json()
    bare = Fault(0, FaultReason.EXITED, "exited with code 3")
    assert bare.to_json() == {"seat": 0, "reason": "exited", "message": "exited with code 3", "stderr_tail": []}
    assert Fault.from_json(bare.to_json()) == bare


def test_the_fault_line_names_everything_and_the_command():
    line = fault_line(game="pegs-and-jokers", game_id=12, seat=3, who="mine", reason="timeout",
                      message="no reply", record="out dir/r.jsonl", request=40, turn=9)
    assert line == ("fault: pegs-and-jokers game 12, seat 3 (mine), turn 9, request 40: timeout: no reply; "
                    "record out dir/r.jsonl; replay: referee replay 'out dir/r.jsonl' --request 40")
    early = fault_line(game="schmier", seat=0, who="b", reason="exited", message="exited", record="r.jsonl")
    assert early.endswith("seat 0 (b), no request pending: exited: exited; record r.jsonl; "
                          "replay: referee replay r.jsonl")
