# shellcheck shell=bash
# Mounts left below a directory, and removing such a directory.
#
#   unmount_under DIR...   unmounts everything mounted at or below each DIR, deepest first (a
#                          mount stacked on another is unmounted as often as it is mounted);
#                          umount, else a lazy umount -l; logs each mount that stays
#   remove_tree DIR        unmount_under DIR, then rm -rf on that file system only; refuses
#                          an empty DIR and /
_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/log.sh
. "$_LIB/log.sh"

unmount_under() {
  local dirs=() d mp
  for d in "$@"; do dirs+=("$(realpath -m "$d")"); done
  while IFS= read -r mp; do
    umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || log "could not unmount $mp"
  done < <(
    # mount points are field 5 of mountinfo, with octal escapes (\040 for a space)
    awk '{print $5}' /proc/self/mountinfo | sed 's/\\040/ /g' | while IFS= read -r mp; do
      for d in "${dirs[@]}"; do
        case $mp in "$d" | "$d"/*) echo "$mp"; break ;; esac
      done
    done | LC_ALL=C sort -r
  )
}

remove_tree() {
  if [ -z "$1" ] || [ "$1" = / ]; then die 1 "remove_tree: refusing '$1'"; fi
  [ -e "$1" ] || return 0
  unmount_under "$1"
  rm -rf --one-file-system "$1"
}
