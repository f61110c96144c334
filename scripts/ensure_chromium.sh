#!/bin/sh
# Make sure Debian's Chromium exists for the browser tests (tests/viz/browser).
# Idempotent: does nothing when /usr/bin/chromium is already there. Installs only as root;
# otherwise, or when the install fails, the browser tests skip with a clear reason.
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "ensure_chromium: $CHROMIUM missing and not root; browser tests will be skipped" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: no apt-get on this machine; browser tests will be skipped" >&2
    exit 0
fi
echo "ensure_chromium: installing chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; then
    echo "ensure_chromium: installed $CHROMIUM" >&2
else
    echo "ensure_chromium: could not install chromium; browser tests will be skipped" >&2
fi
exit 0
