// Package docs holds the project's own documentation: the Markdown files beside this one (README.md
// is their index). It has no code to import.
//
// docs_test.go keeps the repository's references honest. It reads every *.go and *.md file of the
// repository and fails on:
//
//   - a mention of docs/<file>.md that names no file in this folder;
//   - a section cited as "docs/<file>.md §N" (also "§N, §M" and "§N-M" after it; inside docs/,
//     "<file>.md §N" of a file beside it) that has no heading numbered N in that file, and a
//     "docs/architecture.md, decision N" (or "decision N (docs/architecture.md)") without a
//     "Decision N" heading there;
//   - a Markdown link or reference to a repository path that does not exist, or to an #anchor that
//     no heading (or <a id>) of the target file makes;
//   - a mention of a repository path ending in .md (supervisor/README.md) that does not exist.
//
// frontpage_test.go fails when the top-level README.md stops being a front page (`make run`,
// `make test` and the console's docs/console.md in its first 40 lines, at most 250 lines) or when
// this folder's README.md does not link one of the documents beside it.
//
// config_test.go fails when docs/config.md does not name a variable the runtime configuration, the
// runner or the supervisor reads (the lists their --help prints).
//
// Citations of documents that are not in the repository (the old "pipeline.md §1.1" form, the
// design document's numbered decisions, "spec/...") fail TestNoLegacyCitations: the code cites
// docs/ only.
package docs
