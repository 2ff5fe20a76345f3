package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// A source file of the repository, read once.
type sourceFile struct {
	rel   string   // slash-separated path from the repository root
	lines []string // its lines
	isMD  bool
}

// repo is the repository as the checks see it: its files and the headings of its Markdown files.
type repo struct {
	root    string
	files   []sourceFile
	topDirs map[string]bool // the directories at the repository root (cmd, docs, pkg, ...)
	heads   map[string]*headings
}

// headings are what a Markdown file can be cited or linked by.
type headings struct {
	sections  map[string]bool // "1.4" for "## 1.4 Per-batch sequence", "4" for "## 4. Transforms"
	decisions map[string]bool // "13" for "### Decision 13: ..."
	anchors   map[string]bool // GitHub's heading slugs, plus <a id> / <a name> targets
}

func loadRepo(t *testing.T) *repo {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{root: root, topDirs: map[string]bool{}, heads: map[string]*headings{}}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			r.topDirs[e.Name()] = true
		}
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		isMD := strings.HasSuffix(name, ".md")
		if !isMD && !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		r.files = append(r.files, sourceFile{rel: filepath.ToSlash(rel), lines: strings.Split(string(data), "\n"), isMD: isMD})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.files) < 100 {
		t.Fatalf("found only %d .go and .md files under %s: not the repository root?", len(r.files), root)
	}
	return r
}

// headingsOf reads (once) the headings of the Markdown file at rel, or nil when it does not exist.
func (r *repo) headingsOf(rel string) *headings {
	if h, ok := r.heads[rel]; ok {
		return h
	}
	data, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		r.heads[rel] = nil
		return nil
	}
	h := parseHeadings(string(data))
	r.heads[rel] = h
	return h
}

var (
	headingLine   = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	sectionNumber = regexp.MustCompile(`^(\d+(?:\.\d+)*)\.?$`)
	decisionHead  = regexp.MustCompile(`^Decision (\d+)\b`)
	htmlAnchor    = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	inlineLink    = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	fence         = regexp.MustCompile("^ {0,3}(```|~~~)")
)

func parseHeadings(text string) *headings {
	h := &headings{sections: map[string]bool{}, decisions: map[string]bool{}, anchors: map[string]bool{}}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			h.anchors[m[1]] = true
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		title := m[2]
		if first, _, _ := strings.Cut(title, " "); sectionNumber.MatchString(first) {
			h.sections[strings.TrimSuffix(first, ".")] = true
		}
		if d := decisionHead.FindStringSubmatch(title); d != nil {
			h.decisions[d[1]] = true
		}
		slug := slugify(title)
		if n := seen[slug]; n > 0 {
			h.anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			h.anchors[slug] = true
		}
		seen[slug]++
	}
	return h
}

// slugify makes GitHub's anchor of a heading: the text as rendered (links by their text, code
// spans without backticks), lower-cased, every character but letters, digits, '-', '_' and
// spaces removed, each space a '-'.
func slugify(title string) string {
	title = inlineLink.ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, c := range strings.ToLower(title) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.Is(unicode.M, c):
			b.WriteRune(c)
		}
	}
	return b.String()
}

// A problem found in one place.
type finding struct {
	where string // file:line
	what  string
}

// each calls fn with a file's lines with their numbers, leaving out fenced code blocks of Markdown files
// when skipFences is set.
func (f sourceFile) each(skipFences bool, fn func(n int, line string)) {
	inFence := false
	for i, line := range f.lines {
		if f.isMD && fence.MatchString(line) {
			inFence = !inFence
			if skipFences {
				continue
			}
		}
		if skipFences && inFence {
			continue
		}
		fn(i+1, line)
	}
}

var (
	// docs/<file>.md, not part of a longer path (something/docs/x.md) nor of a word.
	docsMention = regexp.MustCompile(`(^|[^A-Za-z0-9_./-]|\.\./)docs/([A-Za-z0-9_.-]+\.md)`)
	// <file>.md not preceded by a path: how the files of docs/ cite each other.
	besideMention = regexp.MustCompile(`(^|[^A-Za-z0-9_./-])([A-Za-z0-9_.-]+\.md)`)
	// The section list that may follow a docs/<file>.md mention: "§1.4", "§4.5, §5.1", "§4.2-4.3",
	// "§1 and §3".
	sectionList = regexp.MustCompile(`^\x60?\s*§+\s*\d+(?:\.\d+)*(?:(?:\s*,\s*|\s+and\s+|\s+or\s+)§+\s*\d+(?:\.\d+)*|\s*[-–]\s*§*\s*\d+(?:\.\d+)*)*`)
	number      = regexp.MustCompile(`\d+(?:\.\d+)*`)
	decisionOf  = regexp.MustCompile(`docs/architecture\.md,?\s+[Dd]ecisions?\s+(\d+)|[Dd]ecisions?\s+(\d+)\s+\(docs/architecture\.md\)`)
	// A repository path ending in .md outside docs/: supervisor/README.md, compose/README.md.
	mdPathMention = regexp.MustCompile(`(?:^|[\s(\x60"'])((?:[A-Za-z0-9_-]+/)+[A-Za-z0-9_.-]+\.md)\b`)
	mdLink        = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	mdRefLink     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	codeSpan      = regexp.MustCompile("`[^`]*`")
)

// TestDocsCitations checks every docs/<file>.md mention and every section or decision cited in it.
func TestDocsCitations(t *testing.T) {
	r := loadRepo(t)
	var bad []finding
	for _, f := range r.files {
		f.each(false, func(n int, line string) {
			where := fmt.Sprintf("%s:%d", f.rel, n)
			for _, m := range docsMention.FindAllStringSubmatchIndex(line, -1) {
				name := line[m[4]:m[5]]
				rel := "docs/" + name
				h := r.headingsOf(rel)
				if h == nil {
					bad = append(bad, finding{where, fmt.Sprintf("%s does not exist", rel)})
					continue
				}
				list := sectionList.FindString(line[m[1]:])
				for _, sec := range number.FindAllString(list, -1) {
					if !h.sections[sec] {
						bad = append(bad, finding{where, fmt.Sprintf("%s has no section %s (no heading numbered %s)", rel, sec, sec)})
					}
				}
			}
			if strings.HasPrefix(f.rel, "docs/") && strings.Count(f.rel, "/") == 1 {
				// Beside each other, the docs cite one another by name: "pipeline.md §1.4".
				for _, m := range besideMention.FindAllStringSubmatchIndex(line, -1) {
					rel := "docs/" + line[m[4]:m[5]]
					h := r.headingsOf(rel)
					if h == nil {
						continue // not a docs file; links are TestRepositoryLinks'
					}
					for _, sec := range number.FindAllString(sectionList.FindString(line[m[1]:]), -1) {
						if !h.sections[sec] {
							bad = append(bad, finding{where, fmt.Sprintf("%s has no section %s (no heading numbered %s)", rel, sec, sec)})
						}
					}
				}
			}
			for _, m := range decisionOf.FindAllStringSubmatch(line, -1) {
				d := m[1] + m[2]
				if h := r.headingsOf("docs/architecture.md"); h == nil || !h.decisions[d] {
					bad = append(bad, finding{where, fmt.Sprintf("docs/architecture.md has no heading \"Decision %s\"", d)})
				}
			}
		})
	}
	report(t, bad)
}

// TestRepositoryLinks checks Markdown links and references to repository paths and their anchors,
// and mentions of repository .md paths in code and docs.
func TestRepositoryLinks(t *testing.T) {
	r := loadRepo(t)
	var bad []finding
	for _, f := range r.files {
		dir := pathDir(f.rel)
		f.each(f.isMD, func(n int, line string) {
			where := fmt.Sprintf("%s:%d", f.rel, n)
			for _, m := range mdPathMention.FindAllStringSubmatch(line, -1) {
				p := m[1]
				first, _, _ := strings.Cut(p, "/")
				if first == "docs" || !r.topDirs[first] {
					continue // docs/ is TestDocsCitations'; other first segments are not ours
				}
				if _, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(p))); err != nil {
					bad = append(bad, finding{where, fmt.Sprintf("%s does not exist", p)})
				}
			}
			if !f.isMD {
				return
			}
			text := codeSpan.ReplaceAllString(line, "")
			var targets []string
			for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
				targets = append(targets, m[1])
			}
			if m := mdRefLink.FindStringSubmatch(text); m != nil {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if msg := r.checkLink(dir, f.rel, target); msg != "" {
					bad = append(bad, finding{where, msg})
				}
			}
		})
	}
	report(t, bad)
}

// checkLink returns what is wrong with a link target written in the Markdown file rel (in dir), or "".
func (r *repo) checkLink(dir, rel, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	dest := rel
	if path != "" {
		if strings.HasPrefix(path, "/") {
			dest = strings.TrimPrefix(path, "/")
		} else {
			dest = cleanJoin(dir, path)
		}
		if strings.HasPrefix(dest, "../") || dest == ".." {
			return fmt.Sprintf("link %s leaves the repository", target)
		}
		if _, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(dest))); err != nil {
			return fmt.Sprintf("link %s: %s does not exist", target, dest)
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	h := r.headingsOf(dest)
	if h == nil || !h.anchors[anchor] {
		return fmt.Sprintf("link %s: %s has no heading or anchor #%s", target, dest, anchor)
	}
	return ""
}

// legacyForms are citations of documents that are not in the repository.
var legacyForms = []*regexp.Regexp{
	// pipeline.md §1.1, config.md §4.5, iggy-protocol-0.9.md §6.1 ... not preceded by docs/.
	regexp.MustCompile(`(^|[^/A-Za-z0-9_.-])(pipeline|config|http-api|ffi-abi|iggy-protocol|iggy-protocol-0\.9)\.md\x60?\s*§`),
	regexp.MustCompile(`DESIGN(\.md)?(\s|//)+decisions?\b`),
	regexp.MustCompile(`DESIGN\.md`),
	regexp.MustCompile(`\.\./shared\b`),
	regexp.MustCompile(`(^|[^A-Za-z0-9_/-])spec/(iggy-protocol|iggy-protocol-0\.9|config|http-api|ffi-abi|pipeline)\.md`),
	regexp.MustCompile(`\b[Ss]pec (0\.9 )?§`),
}

// "spec" or "spec 0.9" ending a line whose next line starts with "§": the last legacy form, split.
var (
	specAtEnd      = regexp.MustCompile(`\b[Ss]pec( 0\.9)?\s*$`)
	sectionAtStart = regexp.MustCompile(`^\s*(//\s*)?§`)
)

// besideInDocs reports whether a match of the first legacy form in a file of docs/ names a file of
// docs/ itself ("see config.md §6" beside config.md), which is a citation in the new form.
func (r *repo) besideInDocs(f sourceFile, re *regexp.Regexp, line string, loc []int) bool {
	if re != legacyForms[0] || !strings.HasPrefix(f.rel, "docs/") || strings.Count(f.rel, "/") != 1 || loc[4] < 0 {
		return false
	}
	return r.headingsOf("docs/"+line[loc[4]:loc[5]]+".md") != nil
}

// TestNoLegacyCitations fails on every citation of a document that is not in the repository.
func TestNoLegacyCitations(t *testing.T) {
	r := loadRepo(t)
	var found []finding
	for _, f := range r.files {
		if f.rel == "docs/docs_test.go" || f.rel == "docs/doc.go" {
			continue // they name the old forms on purpose
		}
		for i, line := range f.lines {
			if i+1 < len(f.lines) && specAtEnd.MatchString(line) && sectionAtStart.MatchString(f.lines[i+1]) {
				found = append(found, finding{fmt.Sprintf("%s:%d", f.rel, i+1), "spec ... § over two lines"})
				continue
			}
			for _, re := range legacyForms {
				loc := re.FindStringSubmatchIndex(line)
				if loc == nil || r.besideInDocs(f, re, line, loc) {
					continue
				}
				found = append(found, finding{fmt.Sprintf("%s:%d", f.rel, i+1), strings.TrimSpace(line[loc[0]:loc[1]])})
				break
			}
		}
	}
	report(t, found)
}

func report(t *testing.T, bad []finding) {
	t.Helper()
	slices.SortFunc(bad, func(a, b finding) int { return strings.Compare(a.where, b.where) })
	for _, b := range bad {
		t.Errorf("%s: %s", b.where, b.what)
	}
}

func pathDir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// cleanJoin joins a slash-separated relative path to dir, resolving "." and "..".
func cleanJoin(dir, p string) string {
	joined := p
	if dir != "" {
		joined = dir + "/" + p
	}
	return filepath.ToSlash(filepath.Clean(filepath.FromSlash(joined)))
}
