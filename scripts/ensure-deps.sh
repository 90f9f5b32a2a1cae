#!/usr/bin/env bash
# Makes sure what a make target needs is present, installing system packages with apt-get when
# run as root (and Python modules with pip); otherwise it says what to install.
#
#   scripts/ensure-deps.sh         what `make build`, `make demo` and `make fuzz` need: libvips
#                                  (with pkg-config) for the pipeline, libjpeg for the direct JPEG
#                                  path, libyaml for the manifest parser, SQLite for the bake state
#   scripts/ensure-deps.sh test    also what `make test` needs: python3 with its jsonschema
#                                  (Draft 2020-12) and yaml modules (the format-spec reader, the
#                                  schema kept in step with the validator), libvips' `vips`
#                                  command, GNU parallel (the sharded-bake test), and on Linux
#                                  strace (the tests that count a bake's system calls)
#   scripts/ensure-deps.sh bench   the build's, python3, and the benchmarks' contenders:
#                                  TurboJPEG (the decode floor), Pillow and ImageMagick
set -euo pipefail
mode=${1:-build}

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! pkg-config --exists vips 2>/dev/null; then missing+=(libvips-dev); fi
if ! pkg-config --exists yaml-0.1 2>/dev/null; then missing+=(libyaml-dev); fi
if ! pkg-config --exists sqlite3 2>/dev/null; then missing+=(libsqlite3-dev); fi
if ! pkg-config --exists libjpeg 2>/dev/null; then missing+=(libjpeg-dev); fi
if [ "$mode" = test ] || [ "$mode" = bench ]; then
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
fi
if [ "$mode" = test ]; then
    command -v vips >/dev/null 2>&1 || missing+=(libvips-tools)
    if [ "$(uname -s)" = Linux ]; then
        command -v strace >/dev/null 2>&1 || missing+=(strace)
    fi
    # GNU parallel runs the shards of the sharded-bake test (moreutils has another `parallel`).
    parallel --version 2>/dev/null | grep -q "GNU parallel" || missing+=(parallel)
fi
if [ "$mode" = bench ]; then
    [ -f /usr/include/turbojpeg.h ] || missing+=(libturbojpeg0-dev)
    command -v mogrify >/dev/null 2>&1 || missing+=(imagemagick)
    /usr/bin/python3 -c 'import PIL' >/dev/null 2>&1 || python3 -c 'import PIL' >/dev/null 2>&1 || missing+=(python3-pil)
    command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
fi

if [ ${#missing[@]} -ne 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "ensure-deps: installing ${missing[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "ensure-deps: missing system packages: ${missing[*]}" >&2
        echo "  Debian/Ubuntu: sudo apt-get install ${missing[*]}" >&2
        echo "  macOS:         brew install vips libyaml sqlite jpeg-turbo pkg-config python parallel" >&2
        exit 1
    fi
fi
[ "$mode" = test ] || exit 0

# The modules must import into the python3 on PATH (often a pyenv or venv interpreter, which
# apt cannot reach), so pip for that interpreter comes first; Debian's packages are the
# fallback where pip refuses a system-managed Python (PEP 668).
python_modules_ok() {
    python3 -c 'import yaml, jsonschema; jsonschema.Draft202012Validator' >/dev/null 2>&1
}
if ! python_modules_ok; then
    echo "ensure-deps: installing the python3 modules jsonschema and yaml" >&2
    python3 -m pip install --quiet --disable-pip-version-check 'jsonschema>=4' pyyaml >/dev/null 2>&1 \
        || python3 -m pip install --quiet --disable-pip-version-check --user 'jsonschema>=4' pyyaml >/dev/null 2>&1 \
        || { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 \
             && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-jsonschema python3-yaml >/dev/null; } \
        || true
    if ! python_modules_ok; then
        echo "ensure-deps: python3 cannot import jsonschema (>= 4) and yaml" >&2
        echo "  pip:           python3 -m pip install --user 'jsonschema>=4' pyyaml" >&2
        echo "  Debian/Ubuntu: sudo apt-get install python3-jsonschema python3-yaml" >&2
        exit 1
    fi
fi
