# shellcheck shell=bash
# debian_mirror <suite> [apt-dir]: prints "<uri> <keyring-or-empty>" of the first apt source of this
# machine that serves binary packages of <suite>, read at run time from the apt
# configuration (deb822 *.sources, then one-line *.list files), so no mirror is written
# into the repository. DEPLOY_DEBIAN_MIRROR (an URI) overrides it. [apt-dir] (default
# /etc/apt) is for tests. Fails when no source serves <suite>.
debian_mirror() {
  local suite=$1 apt=${2:-/etc/apt} f line
  if [ -n "${DEPLOY_DEBIAN_MIRROR:-}" ]; then
    printf '%s \n' "$DEPLOY_DEBIAN_MIRROR"
    return 0
  fi
  for f in "$apt"/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    line=$(awk -v suite="$suite" '
      function reset() { types = ""; uris = ""; suites = ""; signed = ""; enabled = "yes" }
      function check() {
        if (enabled != "no" && (" " types " ") ~ / deb / && (" " suites " ") ~ (" " suite " ") && uris != "") {
          split(uris, u, " "); print u[1] " " signed; done = 1
        }
        reset()
      }
      BEGIN { reset() }
      done { next }
      /^[ \t]*$/ { check(); next }
      /^[ \t]*#/ { next }
      {
        key = tolower($1); $1 = ""; sub(/^[ \t]+/, "")
        if (key == "types:") types = $0
        else if (key == "uris:") uris = $0
        else if (key == "suites:") suites = $0
        else if (key == "signed-by:") signed = $0
        else if (key == "enabled:") enabled = tolower($0)
      }
      END { if (!done) check() }
    ' "$f" | head -n 1)
    if [ -n "$line" ]; then
      printf '%s\n' "$line"
      return 0
    fi
  done
  for f in "$apt"/sources.list "$apt"/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    line=$(awk -v suite="$suite" '
      $1 != "deb" { next }
      {
        opts = ""; i = 2
        if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
        if ($(i + 1) == suite) {
          signed = ""
          if (match(opts, /signed-by=[^] ]+/)) signed = substr(opts, RSTART + 10, RLENGTH - 10)
          print $i " " signed; exit
        }
      }
    ' "$f")
    if [ -n "$line" ]; then
      printf '%s\n' "$line"
      return 0
    fi
  done
  return 1
}
