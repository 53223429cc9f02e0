#!/bin/bash
# Re-create tests/data/patches/ (well-formed samples) and tests/data/malformed/ (broken
# ones) with the real tools: git, GNU diff, quilt. A broken sample is a tool's output,
# or a sample from patches/ edited by sed/head the way mail, editors and people break them.
#
# The corpus is checked in; this script documents how each sample was made and lets
# them be regenerated when a tool's output changes. Output differs slightly between
# tool versions (git's abbreviated ids, quilt's separators); review the diff before
# committing a regenerated corpus. Made with git 2.39, GNU diffutils 3.8, quilt 0.66.
#
# Usage: bash tests/data/make-corpus.sh [DATADIR]   (default: tests/data)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
data=$(realpath -m "${1:-$here}")
out=$data/patches bad=$data/malformed lenient=$data/lenient
mkdir -p "$out" "$bad" "$lenient"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A sealed environment: no user or system config, fixed identities and dates.
export HOME=$tmp/home LC_ALL=C TZ=UTC GIT_CONFIG_NOSYSTEM=1 GIT_EDITOR=false
export GIT_AUTHOR_NAME="Ada Lovelace" GIT_AUTHOR_EMAIL=ada@example.org
export GIT_COMMITTER_NAME="Ada Lovelace" GIT_COMMITTER_EMAIL=ada@example.org
export GIT_AUTHOR_DATE="2024-03-01T12:00:00+0000" GIT_COMMITTER_DATE="2024-03-01T12:00:00+0000"
export QUILT_PATCHES=patches QUILTRC=/dev/null
mkdir -p "$HOME"
git config --global init.defaultBranch main
git config --global core.abbrev 7
git config --global diff.renames true

# Every text file in every sample comes from here.
lines() { seq "$1" "$2" | sed 's/^/line /'; }
touch_all() { find "$1" -exec touch -h -d '2024-03-01 12:00:00 UTC' {} +; }

newrepo() {
    rm -rf "$tmp/r"
    git init -q "$tmp/r"
    cd "$tmp/r"
}
base() { git add -A && git commit -qm base; }

# --- git diff --------------------------------------------------------------------------

newrepo
cat > hello.c <<'EOF'
#include <stdio.h>

static int count(const char *s)
{
	int n = 0;
	while (*s++)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 1;
	printf("%d\n", count(argv[1]));
	return 0;
}
EOF
base
sed -i 's/int n = 0;/size_t n = 0;/; s/printf("%d\\n"/printf("%zu\\n"/' hello.c
git diff > "$out/git-diff.patch"
# The same change with function headings after @@ (-W is not used: it widens the hunks).
git diff -U1 > "$out/git-diff-function-heading.patch"
git diff -U0 > "$out/git-diff-zero-context.patch"
# Mail and editors strip the lone space of an empty context line; git apply and GNU
# patch take the empty line as context.
sed 's/^ $//' "$out/git-diff.patch" > "$out/git-diff-blank-context-stripped.patch"
git checkout -q .

# Zero context with pure insertions and deletions.
lines 1 20 > list.txt && git add list.txt && git commit -qm list
lines 1 20 | sed '3d; 10a\
inserted after 10
15s/$/ changed/' > list.txt
git diff -U0 list.txt > "$out/git-diff-zero-context-insert-delete.patch"
git checkout -q .

# format-patch: mail headers, diffstat, `-- ` signature.
sed -i 's/int n = 0;/size_t n = 0;/' hello.c
lines 1 3 > NEWS
git add -A
git commit -qm "count: use size_t for lengths" -m "A string can be longer than INT_MAX on 64-bit hosts."
git format-patch -q --stdout -1 > "$out/git-format-patch.patch"
git format-patch -q --stdout --base=HEAD~1 -1 > "$out/git-format-patch-base-commit.patch"
git format-patch -q --stdout --no-signature --no-stat -1 > "$out/git-format-patch-no-signature.patch"

# new file, deleted file, empty new file.
newrepo
lines 1 5 > old.txt && base
git rm -q old.txt
lines 1 4 > new.txt && git add new.txt
git diff --cached -- new.txt > "$out/git-new-file.patch"
git diff --cached -- old.txt > "$out/git-deleted-file.patch"
: > empty.txt && git add empty.txt
git diff --cached -- empty.txt > "$out/git-new-empty-file.patch"

# mode change only; mode change plus content; new executable.
newrepo
lines 1 5 > run.sh && lines 1 5 > build.sh && base
chmod +x run.sh
git diff > "$out/git-mode-change.patch"
chmod +x build.sh && sed -i '3s/.*/line three/' build.sh
git diff -- build.sh > "$out/git-mode-change-with-content.patch"

# symlink created, and a file turned into a symlink would need a new/delete pair.
newrepo
lines 1 3 > target.txt && base
ln -s target.txt link && git add link
git diff --cached > "$out/git-new-symlink.patch"

# renames and copies.
newrepo
lines 1 30 > orig.txt && lines 1 30 > source.c && base
git mv orig.txt moved.txt
git diff --cached -M > "$out/git-rename.patch"
git commit -qm mv
git mv moved.txt renamed.txt
sed -i 's/^line 15$/line fifteen/' renamed.txt && git add renamed.txt
git diff --cached -M > "$out/git-rename-with-changes.patch"
git commit -qm mv2
cp source.c copy.c && sed -i 's/^line 2$/line two/' copy.c && git add copy.c
git diff --cached -C -C > "$out/git-copy.patch"
git reset -q --hard
# A complete rewrite (-B): dissimilarity index.
# (git breaks only files of 400 bytes or more: diffcore-break.c MINIMUM_BREAK_SIZE)
seq 1 30 | sed 's/^/a longer line /' > rewrite.txt && git add rewrite.txt && git commit -qm rw
seq 1 30 | sed 's/^/another line /' > rewrite.txt
git diff -B > "$out/git-rewrite-dissimilarity.patch"
git checkout -q rewrite.txt
# A rename from a plain name to one git quotes.
git mv source.c 'söurce.c'
git diff --cached -M > "$out/git-rename-quoted.patch"
git reset -q --hard
# Rename into and out of a directory whose name has a space.
mkdir "sub dir" && git mv renamed.txt "sub dir/renamed file.txt"
git diff --cached -M > "$out/git-rename-space-in-name.patch"

# \ No newline at end of file: on the old side, the new side, both.
newrepo
printf 'one\ntwo\nthree' > a.txt
printf 'one\ntwo\nthree\n' > b.txt
printf 'one\ntwo\nthree' > c.txt
base
printf 'one\ntwo\nthree\n' > a.txt
printf 'one\ntwo\nthree' > b.txt
printf 'one\n2\nthree' > c.txt
git diff -- a.txt > "$out/git-no-newline-old.patch"
git diff -- b.txt > "$out/git-no-newline-new.patch"
git diff -- c.txt > "$out/git-no-newline-both.patch"
printf 'one\ntwo\nthree 3' > c.txt
git diff -- c.txt > "$out/git-no-newline-both-changed.patch"

# CRLF content lines (git leaves them alone without core.autocrlf).
newrepo
printf 'alpha\r\nbeta\r\ngamma\r\ndelta\r\n' > win.txt && base
printf 'alpha\r\nBETA\r\ngamma\r\n\r\ndelta\r\n' > win.txt
git diff > "$out/git-crlf-content.patch"
printf 'alpha\r\nbeta\r\ngamma\r\ndelta' > win.txt
git diff > "$out/git-crlf-no-newline.patch"

# Two sections for one file: two successive diffs of the same file in one patch,
# as `cat 1.diff 2.diff > fix.patch` (or quilt fold without refresh) leaves them.
newrepo
lines 1 30 > twice.txt && base
sed -i 's/^line 3$/line three/' twice.txt && git diff > "$tmp/1.diff" && git commit -qam 1
sed -i 's/^line 25$/line twenty-five/' twice.txt && git diff > "$tmp/2.diff"
cat "$tmp/1.diff" "$tmp/2.diff" > "$out/git-two-sections-one-file.patch"

# Several files, several hunks each, and a section with no trailing context at EOF.
newrepo
lines 1 40 > a.txt && lines 1 10 > b.txt && base
sed -i 's/^line 2$/line 2a/; s/^line 20$/line 20a/; s/^line 39$/line 39a/' a.txt
echo "line 11" >> b.txt
git diff > "$out/git-multi-file-multi-hunk.patch"

# Binary: --binary literal and delta, and the plain "Binary files ... differ".
newrepo
printf 'PK\003\004\000\001\002\003binary\000data' > blob.bin
printf '\000\001\002' > gone.bin
base
printf 'PK\003\004\000\001\002\003BINARY\000data\377' > blob.bin
printf '\211PNG\r\n\032\n\000\000' > new.bin && git add new.bin
git rm -q gone.bin
git add blob.bin
git diff --cached --binary -- blob.bin new.bin gone.bin > "$out/git-binary.patch"
git diff --cached -- blob.bin new.bin > "$out/git-binary-files-differ.patch"

# Non-ASCII, quoted and spaced names (git quotes them, and tabs after names with spaces).
newrepo
printf 'a b\n' > 'my file.txt'
printf 'x\n' > 'naïve café.txt'
printf 'q\n' > 'quote"and\back.txt'
printf 'y\n' > 'tab	name.txt'
printf 'b\n' > 'back\'
printf 'n\n' > 'new
line'
base
printf 'a c\n' > 'my file.txt'
printf 'z\n' > 'naïve café.txt'
printf 'r\n' > 'quote"and\back.txt'
printf 'z\n' > 'tab	name.txt'
printf 'c\n' > 'back\'
printf 'm\n' > 'new
line'
git diff -- 'my file.txt' > "$out/git-space-in-name.patch"
git diff -- 'naïve café.txt' 'quote"and\back.txt' 'tab	name.txt' 'back\' 'new
line' > "$out/git-quoted-names.patch"
git -c core.quotePath=false diff -- 'naïve café.txt' > "$out/git-unquoted-utf8-name.patch"

# git diff --no-prefix (a -p0 git patch).
git diff --no-prefix -- 'my file.txt' > "$out/git-no-prefix-p0.patch"

# --- GNU diff --------------------------------------------------------------------------

cd "$tmp" && rm -rf d && mkdir d && cd d
lines 1 12 > greeting.txt && cp greeting.txt greeting.txt.orig
sed -i 's/^line 6$/line six/' greeting.txt
touch -d '2024-03-01 12:00:00.123456789 +0000' greeting.txt.orig
touch -d '2024-03-02 08:30:00.5 +0000' greeting.txt
diff -u greeting.txt.orig greeting.txt > "$out/diff-u-timestamps.patch" || true
diff -u --label a/greeting.txt --label b/greeting.txt greeting.txt.orig greeting.txt \
    > "$out/diff-u-labels.patch" || true

mkdir -p old/src new/src old/doc new/doc
lines 1 10 > old/src/main.c && lines 1 10 > new/src/main.c
sed -i 's/^line 5$/line five/' new/src/main.c
lines 1 4 > old/doc/gone.txt
lines 1 3 > new/doc/added.txt
lines 1 8 > old/README && lines 1 8 > new/README && echo "line 9" >> new/README
printf '\000\001' > old/src/logo.bin && printf '\000\002' > new/src/logo.bin
touch_all old && touch_all new
diff -ruN old new > "$out/diff-ruN-trees.patch" || true
# A patch saved with CRLF line endings throughout (an editor on Windows did it).
sed 's/$/\r/' "$out/diff-u-labels.patch" > "$out/diff-u-crlf-everywhere.patch"

# Subversion's shape (no svn here, so written by hand): Index:, ====, (revision N).
cat > "$out/svn-diff.patch" <<'EOF'
Index: trunk/src/config.h
===================================================================
--- trunk/src/config.h	(revision 1234)
+++ trunk/src/config.h	(working copy)
@@ -1,4 +1,4 @@
 #ifndef CONFIG_H
 #define CONFIG_H
-#define MAX_JOBS 4
+#define MAX_JOBS 16
 #endif
EOF

# --- quilt -----------------------------------------------------------------------------

cd "$tmp" && rm -rf q && mkdir q && cd q
mkdir -p src && lines 1 10 > src/util.c && lines 1 6 > Makefile
touch_all .
quilt new fix-util.patch > /dev/null
quilt add src/util.c Makefile > /dev/null
sed -i 's/^line 4$/line four/' src/util.c && echo "line 7" >> Makefile
touch -d '2024-03-02 09:00:00 UTC' src/util.c Makefile
quilt refresh -p1 --no-timestamps --no-index > /dev/null
cp patches/fix-util.patch "$out/quilt-p1-no-timestamps.patch"
quilt refresh -p1 > /dev/null
cp patches/fix-util.patch "$out/quilt-p1-index.patch"
quilt refresh -p0 --no-timestamps > /dev/null
cp patches/fix-util.patch "$out/quilt-p0.patch"
quilt refresh -p ab --no-timestamps > /dev/null
cp patches/fix-util.patch "$out/quilt-p-ab.patch"
quilt header -r > /dev/null <<'EOF'
Description: make util.c count from four
 util.c counted from line 4 in words; make it say four.
Author: Ada Lovelace <ada@example.org>
Origin: vendor, https://example.org/patches/fix-util
Bug-Debian: https://bugs.debian.org/123456
Forwarded: not-needed
Last-Update: 2024-03-01
---
This patch header follows DEP-3: https://dep-team.pages.debian.net/deps/dep3/
EOF
cp patches/fix-util.patch "$out/quilt-dep3-header.patch"
# A patch that is only a header: quilt header on a patch with no files.
quilt new header-only.patch > /dev/null
quilt header -r > /dev/null <<'EOF'
Description: record that upstream's fix for #42 is not needed here
Author: Ada Lovelace <ada@example.org>
Forwarded: not-needed
EOF
cp patches/header-only.patch "$out/quilt-dep3-header-only.patch"
quilt delete header-only.patch > /dev/null
# A new and a deleted file in quilt's -p1 style.
quilt new add-remove.patch > /dev/null
quilt add src/new.c Makefile > /dev/null
lines 1 3 > src/new.c && rm Makefile
quilt refresh -p1 --no-timestamps > /dev/null
cp patches/add-remove.patch "$out/quilt-new-and-deleted.patch"

# --- header only -------------------------------------------------------------------------
newrepo
lines 1 3 > f.txt && base
git commit -q --allow-empty -m "Empty commit: this patch has only a header" \
    -m "It records a decision and changes nothing."
git format-patch -q --always --stdout -1 > "$out/git-format-patch-empty.patch"

# --- malformed: other diff formats, made by the tools ------------------------------------

cd "$tmp" && rm -rf m && mkdir m && cd m
lines 1 8 > old.txt && sed 's/^line 4$/line four/' old.txt > new.txt
touch_all .
diff -c --label a/f.txt --label b/f.txt old.txt new.txt > "$bad/context-diff.patch" || true
diff -e old.txt new.txt > "$bad/ed-diff.patch" || true
diff old.txt new.txt > "$bad/normal-diff.patch" || true
# The same after header text, as a mail or a DEP-3 header leaves them.
{ printf 'Subject: [PATCH] say four\n\n'; diff -e old.txt new.txt || true; } \
    > "$bad/ed-diff-after-header.patch"
{ printf 'Description: say four\n\n'; diff old.txt new.txt || true; } \
    > "$bad/normal-diff-after-header.patch"
# A context section before a unified one: must not pass as header text.
{ diff -c --label a/f.txt --label b/f.txt old.txt new.txt || true
  diff -u --label a/g.txt --label b/g.txt old.txt new.txt || true; } > "$bad/context-then-unified.patch"

# A merge's combined diff (git diff --cc).
newrepo
lines 1 5 > m.txt && base
git checkout -qb side && sed -i 's/^line 2$/side 2/' m.txt && git commit -qam side
git checkout -q main && sed -i 's/^line 4$/main 4/' m.txt && git commit -qam main
git merge -q side -m merge > /dev/null
sed -i 's/^line 3$/merge 3/' m.txt && git commit -q --amend -am merge
git show --format= --cc HEAD > "$bad/combined-diff.patch"

# --- malformed: samples from patches/ broken by hand -------------------------------------

cd "$out"
head -n 10 git-diff.patch > "$bad/truncated-hunk.patch"
sed '5s/.*/@@ -2,6 +2,6 @@/' git-diff.patch > "$bad/hunk-count-too-few.patch"
sed '5s/.*/@@ -2,8 +2,8 @@/' git-diff.patch > "$bad/hunk-count-too-many.patch"
sed 's/^@@ -36,5 +36,5 @@ line 35$/@@ -36,6 +36,6 @@ line 35/' git-multi-file-multi-hunk.patch \
    > "$bad/hunk-count-too-many-before-next-file.patch"
sed '5s/.*/@@ -2,7 +2,7/' git-diff.patch > "$bad/bad-hunk-header.patch"
sed '5s/.*/@@ -0,7 +2,7 @@/' git-diff.patch > "$bad/hunk-at-line-zero.patch"
# Damaged in ways GNU patch still reads (tests/test_lenient.py): text between sections.
sed '/^diff --git a\/b.txt/i Thanks, and sorry for the noise!' git-multi-file-multi-hunk.patch \
    > "$lenient/garbage-between-sections.patch"
{ cat git-mode-change.patch; echo "chmod it, please"; cat git-new-file.patch; } \
    > "$lenient/garbage-after-mode-change.patch"
sed '1,4d' git-diff.patch > "$bad/hunk-outside-section.patch"
sed '/^@@ -12,6 +12,6 @@/i \\' git-diff.patch > "$bad/hunk-after-blank-line.patch"
{ sed -n '1,4p' git-diff.patch; sed -n '14,$p' git-diff.patch; sed -n '5,13p' git-diff.patch; } \
    > "$bad/hunks-out-of-order.patch"
sed 's/^@@ -12,6 +12,6 @@/@@ -6,6 +6,6 @@/' git-diff.patch > "$bad/hunks-overlap.patch"
sed '4d' git-diff.patch > "$lenient/minus-without-plus.patch"  # GNU patch reads it
sed '2s/\.\./.../' git-diff.patch > "$bad/bad-index-line.patch"
sed '2s/100644/100999/' git-new-file.patch > "$bad/unknown-file-mode.patch"
sed '1s/greeting/greet\x00ing/' diff-u-labels.patch > "$bad/nul-in-name.patch"
{ printf 'diff --git "a/back\\q" "b/back\\q"\n'; sed -n '2,7p' git-quoted-names.patch; } \
    > "$bad/bad-escape-in-quoted-name.patch"
sed '1s/.*/--- \/dev\/null/; 2s/.*/+++ \/dev\/null/' diff-u-labels.patch > "$bad/both-sides-dev-null.patch"
# Read with the wrong -p level (the table in tests/test_patch.py gives the level).
cp quilt-p0.patch "$bad/quilt-p0-read-with-p1.patch"
cp git-diff.patch "$bad/git-diff-read-with-p2.patch"
cp git-no-prefix-p0.patch "$bad/git-no-prefix-read-with-p1.patch"
