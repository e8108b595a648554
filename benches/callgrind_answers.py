"""What the callgrind scripts read from a server's profile: how many answers it gave and how
many instructions its tasks ran.

    python3 benches/callgrind_answers.py PROFILE ANNOTATED MARKER [MARKER ...]

PROFILE is callgrind's output, ANNOTATED `callgrind_annotate --inclusive=yes` of it. The
answers are the calls of the functions whose names hold one of the MARKERs (hyper's response
head encoder, a WebSocket frame writer, …; a MARKER starting with `=` is a whole name: `=write`
is libc's `write`); the instructions are tokio's `run_task`,
inclusive: the process's start and its idle waiting are left out. Prints `ANSWERS
INSTRUCTIONS`, or exits with an error when either is missing.
"""

import re
import sys


def answers(profile, markers):
    """Calls of the functions whose names hold one of `markers` (or are one, after `=`)."""
    names, callee, count = {}, None, 0
    for line in open(profile):
        m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if line.startswith("cfn="):
                callee = names.get(m.group(1), "")
            continue
        if line.startswith("calls=") and callee and any(matches(callee, marker) for marker in markers):
            count += int(line.split("=")[1].split()[0])
    return count


def matches(name, marker):
    """Whether `name` is `marker` after its `=`, or holds `marker`."""
    return name == marker[1:] if marker.startswith("=") else marker in name


def running(annotated):
    """The instructions of tokio's `run_task`, inclusive, or `None`."""
    for line in open(annotated):
        if "current_thread::Context::run_task [" in line:
            return int(line.split()[0].replace(",", ""))
    return None


if __name__ == "__main__":
    profile, annotated, *markers = sys.argv[1:]
    answered, instructions = answers(profile, markers), running(annotated)
    if not answered or instructions is None:
        sys.exit(f"{profile}: no answers or no task time in the profile")
    print(answered, instructions)
