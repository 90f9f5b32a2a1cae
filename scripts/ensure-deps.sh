#!/usr/bin/env bash
# Makes sure the system packages the build needs are present: libvips (with pkg-config) for the
# pipeline, python3 for the format-spec reader test. Installs them with apt-get when run as root.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! pkg-config --exists vips 2>/dev/null; then missing+=(libvips-dev); fi
command -v vips >/dev/null 2>&1 || missing+=(libvips-tools)
command -v python3 >/dev/null 2>&1 || missing+=(python3)

if [ ${#missing[@]} -eq 0 ]; then exit 0; fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "ensure-deps: missing system packages: ${missing[*]}" >&2
    echo "  Debian/Ubuntu: sudo apt-get install ${missing[*]}" >&2
    echo "  macOS:         brew install vips pkg-config" >&2
    exit 1
fi
