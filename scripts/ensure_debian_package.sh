#!/bin/sh
# Make sure a program from a Debian package exists, for the tests that need it:
#     sh scripts/ensure_debian_package.sh PROGRAM PACKAGE "WHAT NEEDS IT"
# (`make test` runs it for Chromium, the browser tests' browser, and bubblewrap, the grader's isolation backend
# where Linux lacks Landlock ABI 4.) Idempotent: does nothing when PROGRAM is already there (a path, or a name
# on PATH). Installs only as root with apt-get; otherwise, or when the install fails, those tests skip with a
# clear reason.
PROGRAM="$1"
PACKAGE="$2"
WHAT="$3"
if [ -x "$PROGRAM" ] || command -v "$PROGRAM" >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "ensure_debian_package: $PROGRAM missing and not root; $WHAT will be skipped" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_debian_package: no apt-get on this machine; $WHAT will be skipped" >&2
    exit 0
fi
echo "ensure_debian_package: installing $PACKAGE with apt-get (for $WHAT)" >&2
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq --no-install-recommends "$PACKAGE" >/dev/null; then
    echo "ensure_debian_package: installed $PACKAGE" >&2
else
    echo "ensure_debian_package: could not install $PACKAGE; $WHAT will be skipped" >&2
fi
exit 0
