# shellcheck shell=bash
# Sourced by scripts/bootstrap.sh (and by tests/test_spice_hardening.py).
#
# debian_mirror: print the URI of the Debian archive this system's APT already uses
# (the Debian archive or a local mirror of it), read from
#   - the classic one-line format: $APT_DIR/sources.list and $APT_DIR/sources.list.d/*.list
#     ("deb [options] URI SUITE COMPONENTS...")
#   - the deb822 format: $APT_DIR/sources.list.d/*.sources ("Types: deb", "URIs: ...",
#     "Suites: bookworm ...")
# APT_DIR is $RRAM_APT_DIR or /etc/apt.  Only "deb" entries whose suite is a Debian suite
# of this release ($1, default bookworm: bookworm, bookworm-updates, bookworm-backports)
# count; security archives (suite bookworm-security) are skipped.  Prints nothing and
# returns 1 when no such entry exists.
debian_mirror() {
    local codename="${1:-bookworm}" dir="${RRAM_APT_DIR:-/etc/apt}" f uri
    local files=()
    [ -f "$dir/sources.list" ] && files+=("$dir/sources.list")
    for f in "$dir"/sources.list.d/*.list; do [ -f "$f" ] && files+=("$f"); done
    if [ "${#files[@]}" -gt 0 ]; then
        uri="$(awk -v cn="$codename" '
            /^[[:space:]]*deb[[:space:]]/ {
                i = 2
                if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                u = $i; s = $(i + 1)
                if (s == cn || s == cn "-updates" || s == cn "-backports") { print u; exit }
            }' "${files[@]}")"
        if [ -n "$uri" ]; then printf '%s\n' "${uri%/}"; return 0; fi
    fi
    for f in "$dir"/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri="$(awk -v cn="$codename" '
            function flush() {
                if (types ~ /(^|[[:space:]])deb([[:space:]]|$)/ && enabled != "no" && uris != "") {
                    n = split(suites, s, /[[:space:]]+/)
                    for (k = 1; k <= n; k++)
                        if (s[k] == cn || s[k] == cn "-updates" || s[k] == cn "-backports") {
                            split(uris, u, /[[:space:]]+/); print u[1]; found = 1; exit
                        }
                }
                types = ""; uris = ""; suites = ""; enabled = ""
            }
            /^[[:space:]]*#/ { next }
            /^[[:space:]]*$/ { flush(); next }
            {
                key = tolower($1); sub(/:$/, "", key)
                val = $0; sub(/^[^:]*:[[:space:]]*/, "", val); sub(/[[:space:]]+$/, "", val)
                if (key == "types") types = val
                else if (key == "uris") uris = val
                else if (key == "suites") suites = val
                else if (key == "enabled") enabled = tolower(val)
            }
            END { if (!found) flush() }' "$f")"
        if [ -n "$uri" ]; then printf '%s\n' "${uri%/}"; return 0; fi
    done
    return 1
}

# backports_line: the one-line APT entry for $1-backports (default bookworm) on the
# system's own Debian mirror; fails with a message naming where it looked.
backports_line() {
    local codename="${1:-bookworm}" uri
    if ! uri="$(debian_mirror "$codename")"; then
        printf 'no Debian mirror for %s found in %s/sources.list, %s/sources.list.d/*.list or *.sources; add a "deb URI %s main" line first\n' \
            "$codename" "${RRAM_APT_DIR:-/etc/apt}" "${RRAM_APT_DIR:-/etc/apt}" "$codename" >&2
        return 1
    fi
    printf 'deb %s %s-backports main\n' "$uri" "$codename"
}
