#!/usr/bin/env bash
# Bootstrap the rram development environment on a Debian/Ubuntu machine.
#
#   1. ngspice (with OSDI support, >= 40) and its shared library from the OS packages,
#      installed only when missing.  On Debian 12 the newest packaged build is
#      ngspice 46 from bookworm-backports.  Needs root or sudo only when something
#      must be installed; a plain user with ngspice present is fine.
#   2. A virtual environment in .venv/ at the repository root.
#   3. The package, editable, with the extras given in RRAM_EXTRAS (default: all).
#
# Idempotent: a second run only checks.  Exit status is non-zero with a message
# naming what is missing when something cannot be done.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
extras="${RRAM_EXTRAS:-all}"
python="${PYTHON:-python3}"
min_ngspice=40

# shellcheck source=scripts/debian_mirror.sh
. "$repo/scripts/debian_mirror.sh"
apt_dir="${RRAM_APT_DIR:-/etc/apt}"

say() { printf 'bootstrap: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

ngspice_version() {
    # Prints the ngspice major version, or nothing when ngspice is absent.
    command -v ngspice >/dev/null 2>&1 || return 0
    ngspice -v 2>/dev/null | sed -n 's/.*ngspice-\([0-9][0-9]*\).*/\1/p' | head -n 1
}

shared_lib_present() {
    # PySpice loads libngspice.so (the -dev symlink) or a path in NGSPICE_LIBRARY_PATH.
    if [ -n "${NGSPICE_LIBRARY_PATH:-}" ] && [ -e "$NGSPICE_LIBRARY_PATH" ]; then return 0; fi
    ldconfig -p 2>/dev/null | grep -q 'libngspice\.so ' && return 0
    for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
        [ -e "$d/libngspice.so" ] && return 0
    done
    return 1
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else die "installing system packages needs root; run as root or install sudo, or install them yourself: $*"
    fi
}

install_ngspice() {
    [ -r /etc/os-release ] || die "cannot identify the OS; install ngspice >= $min_ngspice and libngspice0-dev yourself"
    # shellcheck disable=SC1091
    . /etc/os-release
    command -v apt-get >/dev/null 2>&1 || die "no apt-get on ${PRETTY_NAME:-this system}; install ngspice >= $min_ngspice with its shared library (libngspice.so) yourself"
    export DEBIAN_FRONTEND=noninteractive
    local target=()
    if [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ]; then
        # Debian 12 ships ngspice 39 (no OSDI); backports carries 46.  The backports
        # entry uses the mirror the system already uses (a local mirror keeps working).
        local list="$apt_dir/sources.list.d/bookworm-backports.list" line
        if ! grep -rqs 'bookworm-backports' "$apt_dir/sources.list" "$apt_dir/sources.list.d/"; then
            line="$(backports_line bookworm)" || die "cannot add bookworm-backports: no Debian mirror in the APT sources"
            say "adding '$line' to $list"
            echo "$line" | as_root tee "$list" >/dev/null
        fi
        target=(-t bookworm-backports)
    fi
    say "installing ngspice, libngspice0 and libngspice0-dev ${target[*]:-}"
    as_root apt-get update -qq
    as_root apt-get install -y -qq "${target[@]}" ngspice libngspice0 libngspice0-dev >/dev/null
}

ensure_python_venv_support() {
    "$python" -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
    command -v apt-get >/dev/null 2>&1 || die "$python lacks venv/ensurepip; install the venv module for it"
    say "installing python3-venv"
    as_root apt-get update -qq
    as_root apt-get install -y -qq python3-venv >/dev/null
}

# --- 1. ngspice -----------------------------------------------------------
version="$(ngspice_version)"
if [ -z "$version" ] || [ "$version" -lt "$min_ngspice" ] || ! shared_lib_present; then
    say "ngspice ${version:-absent} (need >= $min_ngspice with libngspice.so)"
    install_ngspice
    version="$(ngspice_version)"
    [ -n "$version" ] || die "ngspice still not found after installation"
    shared_lib_present || die "libngspice.so still not found after installation (package libngspice0-dev)"
    if [ "$version" -lt "$min_ngspice" ]; then
        die "the newest ngspice this system packages is $version; OSDI (Verilog-A) needs >= $min_ngspice.
       On Debian 12 enable bookworm-backports; on Ubuntu use 24.04 or newer."
    fi
fi
say "ngspice $version with shared library: ok"

# --- 2. virtual environment -----------------------------------------------
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "$python is $("$python" -V 2>&1); rram needs Python >= 3.11"
if [ ! -x "$venv/bin/python" ]; then
    ensure_python_venv_support
    say "creating $venv"
    "$python" -m venv "$venv"
fi

# --- 3. the package ---------------------------------------------------------
# Reinstall only when pyproject.toml, the pinned versions or the requested extras changed.
stamp="$venv/.rram-installed"
constraints="$repo/scripts/constraints.txt"
[ -r "$constraints" ] || die "missing $constraints (the pinned versions; restore it from git)"
want="$(cat "$repo/pyproject.toml" "$constraints" | sha256sum | cut -d' ' -f1) $extras"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "installing rram[$extras] into $venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
    "$venv/bin/python" -m pip install -q -c "$constraints" -e "$repo[$extras]"
    echo "$want" > "$stamp"
fi
say "environment ready: $venv"
