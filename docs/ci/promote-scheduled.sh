#!/bin/sh
# Scheduled promotion (GitLab CI and GitHub Actions run this same script):
# print the promotion plan, promote FROM into every target whose gates let
# the version through (soak, freeze, approvals, after, waves), each target on
# its own branch with a merge-request description, and push the branches.
# hydrate decides everything from git history and the clock: no controller.
#
# Environment:
#   FROM          the environment to promote from (required), e.g. staging
#   REMOTE        the remote to push to (default origin)
#   BRANCH        the branch name (default promote/$FROM/<UTC time>); with
#                 several targets each gets BRANCH/<target>
#   PUSH_OPTIONS  extra `git push` options, e.g. GitLab's
#                 "-o merge_request.create -o merge_request.target=main"
# Writes plan.md (the plan), descriptions/<target>.md (one merge-request
# description per target) and promoted-branches.txt (one line per branch:
# the branch, a space, its description file) for the merge-request step.
# Exit 0 when something was promoted or everything is held (nothing to do);
# non-zero on an error.
set -eu
: "${FROM:?set FROM, the environment to promote from}"
REMOTE=${REMOTE:-origin}
BRANCH=${BRANCH:-promote/$FROM/$(date -u +%Y%m%dT%H%M%SZ)}

hydrate promote --plan --output markdown > plan.md
cat plan.md

rm -rf descriptions
mkdir descriptions
status=0
hydrate promote "$FROM" --branch "$BRANCH" --describe 'descriptions/{env}.md' || status=$?
case $status in
  0) ;;
  1) echo "nothing promoted: every target is held (see plan.md)"; : > promoted-branches.txt; exit 0 ;;
  *) exit "$status" ;;
esac

# The branches this run created: BRANCH itself (one target) or
# BRANCH/<target>, each with its target's description.
: > promoted-branches.txt
for b in $(git for-each-ref --format='%(refname:short)' "refs/heads/$BRANCH" "refs/heads/$BRANCH/"); do
  target=${b#"$BRANCH"/}
  if [ "$target" = "$b" ]; then
    # One target: its description is the only one written.
    set -- descriptions/*.md
    echo "$b $1" >> promoted-branches.txt
  else
    echo "$b descriptions/$target.md" >> promoted-branches.txt
  fi
done
if [ ! -s promoted-branches.txt ]; then
  echo "every target already carries $FROM's version"
  exit 0
fi
while read -r b description; do
  echo "$b: $description"
  # shellcheck disable=SC2086 # PUSH_OPTIONS is a list of options
  git push ${PUSH_OPTIONS:-} "$REMOTE" "refs/heads/$b:refs/heads/$b"
done < promoted-branches.txt
