"""Messages between the grader and a worker: signed JSON lines on a private file descriptor."""
from __future__ import annotations

import hashlib
import hmac
import json

RUN_TEST = "tinygrad_course.grading.run_test"
NOTE = "tinygrad_course.grading.note"
DONE = "tinygrad_course.grading.done"


def sign(token: bytes, payload: dict) -> bytes:
    """One line: the JSON payload and its HMAC under `token`."""
    body = json.dumps(payload, sort_keys=True)
    mac = hmac.new(token, body.encode(), hashlib.sha256).hexdigest()
    return (json.dumps({"body": body, "mac": mac}) + "\n").encode()


def verify_lines(token: bytes, data: bytes) -> tuple[list[dict], int]:
    """(authentic payloads, number of lines that were not signed by the grader)."""
    good, forged = [], 0
    for line in data.splitlines():
        try:
            outer = json.loads(line)
            body, mac = outer["body"], outer["mac"]
            expected = hmac.new(token, body.encode(), hashlib.sha256).hexdigest()
            if not (isinstance(mac, str) and hmac.compare_digest(mac, expected)):
                raise ValueError
            good.append(json.loads(body))
        except Exception:
            if line.strip():
                forged += 1
    return good, forged

# isolation levels a worker reports (signed, before any learner code runs)
LANDLOCK = "landlock"
AUDIT_HOOK_ONLY = "audit hook only"
SANDBOX_FAILED = "the OS sandbox (Landlock) could not be applied, so the notebook was not run"
SANDBOX_FAILED_EXIT = 70
