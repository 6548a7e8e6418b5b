/*
 * test_split.c: fl_split(), a command line to argv as a POSIX shell splits
 * words, with nothing expanded and every shell operator refused. It does
 * not depend on the backend; each case runs under every backend name all
 * the same.
 */
#include "test.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Splits line, which must succeed, and compares with the words given. */
#define ASSERT_SPLITS(line, ...)                                             \
    assert_splits(__FILE__, __LINE__, (line), (const char *[]){ __VA_ARGS__ })
#define NO_WORDS NULL

static void assert_splits(const char *file, int line_no, const char *line,
                          const char *const *want)
{
    char **got;
    struct fl_error e;
    int r = fl_split(line, &got, &e);
    if (r != 0)
        fl_t_fail(file, line_no, "fl_split(\"%s\") returned %d: %s", line, r, e.detail);
    size_t i = 0;
    for (; want[i] && got[i]; i++)
        if (strcmp(want[i], got[i]) != 0)
            fl_t_fail(file, line_no, "fl_split(\"%s\"): word %zu is \"%s\", expected \"%s\"",
                      line, i, got[i], want[i]);
    if (want[i] || got[i])
        fl_t_fail(file, line_no, "fl_split(\"%s\"): %s words than expected", line,
                  got[i] ? "more" : "fewer");
    fl_split_free(got);
}

/* fl_split must refuse line with EINVAL, at byte offset at. Returns the
 * detail (kept). */
static char *refused_at(const char *line, int at)
{
    char **got = (char **)1;
    struct fl_error e;
    ASSERT_ERR(fl_split(line, &got, &e), EINVAL);
    ASSERT_NULL(got);
    ASSERT_EQ(e.index, at);
    ASSERT_STR_CONTAINS(e.detail, t_fmt("byte %d: '%c'", at, line[at]));
    return t_strdup(e.detail);
}

/* ---- words --------------------------------------------------------------- */

TEST(blanks_separate_words)
{
    ASSERT_SPLITS("grep  -c\tx  file", "grep", "-c", "x", "file", NULL);
}

TEST(an_empty_or_blank_line_has_no_words)
{
    ASSERT_SPLITS("", NO_WORDS);
    ASSERT_SPLITS(" \t ", NO_WORDS);
}

TEST(single_quotes_keep_everything_as_it_is)
{
    ASSERT_SPLITS("echo 'a  b|c;$x\\n\"'", "echo", "a  b|c;$x\\n\"", NULL);
}

TEST(double_quotes_keep_blanks_and_operators)
{
    ASSERT_SPLITS("echo \"a  b|c;&<>()\"", "echo", "a  b|c;&<>()", NULL);
}

TEST(a_backslash_in_double_quotes_escapes_only_what_posix_says)
{
    ASSERT_SPLITS("\"\\\" \\\\ \\$ \\` \\n \\a\"", "\" \\ $ ` \\n \\a", NULL);
}

TEST(a_backslash_outside_quotes_keeps_the_next_character)
{
    ASSERT_SPLITS("a\\ b \\| \\$x \\'", "a b", "|", "$x", "'", NULL);
}

TEST(a_backslash_newline_joins_the_lines)
{
    ASSERT_SPLITS("ab\\\ncd \\\n ef \"g\\\nh\"", "abcd", "ef", "gh", NULL);
}

TEST(quoted_parts_and_text_side_by_side_make_one_word)
{
    ASSERT_SPLITS("a'b c'\"d e\"f", "ab cd ef", NULL);
}

TEST(empty_quotes_make_an_empty_word)
{
    ASSERT_SPLITS("prog '' \"\" x", "prog", "", "", "x", NULL);
}

TEST(globs_tilde_braces_and_assignments_are_plain_text)
{
    ASSERT_SPLITS("A=1 ls *.c ?x [ab] ~ ~/d {a,b} a#b '#c'", "A=1", "ls", "*.c", "?x", "[ab]",
                  "~", "~/d", "{a,b}", "a#b", "#c", NULL);
}

TEST(a_comment_is_refused)
{
    ASSERT_STR_CONTAINS(refused_at("prog arg #note", 9), "comment");
    ASSERT_STR_CONTAINS(refused_at("#!/bin/sh", 0), "comment");
}

TEST(an_unquoted_newline_is_refused_as_a_command_separator)
{
    char **argv;
    struct fl_error e;
    ASSERT_ERR(fl_split("a\nb", &argv, &e), EINVAL);
    ASSERT_EQ(e.index, 1);
    ASSERT_STR_CONTAINS(e.detail, "byte 1: a newline is a command separator");
    /* Quoted, a newline is text. */
    ASSERT_SPLITS("'a\nb' \"c\nd\"", "a\nb", "c\nd", NULL);
}

/* ---- what only a shell would do is refused ------------------------------- */

TEST(every_unquoted_operator_is_refused_with_its_offset)
{
    const char *ops = "|&;<>()$`";
    for (const char *c = ops; *c; c++) {
        char line[32];
        snprintf(line, sizeof line, "prog a%cb", *c);
        char *why = refused_at(line, 6);
        ASSERT_STR_CONTAINS(why, "in a shell");
    }
}

TEST(an_expansion_inside_double_quotes_is_refused)
{
    ASSERT_STR_CONTAINS(refused_at("echo \"a $HOME\"", 8), "inside double quotes");
    ASSERT_STR_CONTAINS(refused_at("echo \"`id`\"", 6), "inside double quotes");
}

TEST(an_unbalanced_quote_is_refused_at_the_quote_that_opens)
{
    ASSERT_STR_CONTAINS(refused_at("echo 'abc", 5), "never closes");
    ASSERT_STR_CONTAINS(refused_at("echo x\"abc 'd'", 6), "never closes");
}

/* The rest of the line is the quote's text, so a shell reports the quote
 * (dash: "Unterminated quoted string") before anything inside it. */
TEST(an_unbalanced_double_quote_is_refused_before_an_expansion_inside_it)
{
    ASSERT_STR_CONTAINS(refused_at("echo \"abc $x", 5), "never closes");
    ASSERT_STR_CONTAINS(refused_at("echo \"`id` \\\"", 5), "never closes");
}

TEST(a_lone_backslash_at_the_end_is_refused)
{
    refused_at("echo a\\", 6);
}

TEST(a_null_line_or_argv_is_einval)
{
    char **argv;
    struct fl_error e;
    ASSERT_ERR(fl_split(NULL, &argv, &e), EINVAL);
    ASSERT_NULL(argv);
    ASSERT_ERR(fl_split("a", NULL, &e), EINVAL);
    ASSERT_OK(fl_split("a", &argv, NULL));  /* no error record needed */
    fl_split_free(argv);
    fl_split_free(NULL);
}

TEST(the_words_run_as_a_command)
{
    char **argv;
    ASSERT_OK(fl_split(t_fmt("'%s' echo 'two words'", fl_test_probe), &argv, NULL));
    struct fl_cmd cmd = { .argv = argv, .backend = BACKEND };
    NEEDS_CLOSE_OTHERS();
    ASSERT_STR_EQ(t_probe(&cmd), "two words\n");
    fl_split_free(argv);
}

/* ---- against Python's shlex.split ---------------------------------------- */

static unsigned long long rng = 0x2545F4914F6CDD1DULL;

static unsigned next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 16);
}

/* Lines on which shlex.split (comments off) must split as fl_split does:
 * none of what fl_split refuses and shlex takes ($, `, #, a newline), and
 * no \r, which shlex takes for a blank. */
static void random_line(char *buf, size_t size)
{
    static const char alphabet[] = "ab c\t'\"\\*~=-";
    size_t len = next_rand() % (size - 1);
    for (size_t i = 0; i < len; i++)
        buf[i] = alphabet[next_rand() % (sizeof alphabet - 1)];
    buf[len] = '\0';
}

static void put_hex(FILE *f, const char *s)
{
    for (; *s; s++)
        fprintf(f, "%02x", (unsigned char)*s);
}

TEST(splits_as_shlex_does_on_random_lines)
{
    static const char *const pythons[] = { "/usr/bin/python3", "/usr/local/bin/python3", NULL };
    const char *python = NULL;
    for (size_t i = 0; pythons[i] && !python; i++)
        if (access(pythons[i], X_OK) == 0)
            python = pythons[i];
    if (!python)
        SKIP("no python3 to compare with shlex.split");
    enum { LINES = 2000 };
    char *dir = t_tmpdir();
    char *in = t_fmt("%s/lines", dir);
    FILE *f = fopen(in, "w");
    ASSERT(f);
    static char lines[LINES][16];
    for (int i = 0; i < LINES; i++) {
        random_line(lines[i], sizeof lines[i]);
        put_hex(f, lines[i]);
        fputc('\n', f);
    }
    fclose(f);
    static const char script[] =
        "import shlex, sys\n"
        "for l in open(sys.argv[1]):\n"
        "    s = bytes.fromhex(l.strip()).decode()\n"
        "    try:\n"
        "        print(' '.join(w.encode().hex() + '.' for w in shlex.split(s)))\n"
        "    except ValueError:\n"
        "        print('ERR')\n";
    struct fl_cmd cmd = { .argv = ARGV((char *)python, "-c", (char *)script, in),
                          .env = (char *const[]){ "PYTHONIOENCODING=utf-8", NULL },
                          .backend = BACKEND };
    NEEDS_CLOSE_OTHERS();
    char *row = t_probe(&cmd);
    for (int i = 0; i < LINES; i++) {
        char *end = strchr(row, '\n');
        if (!end)
            FAIL("shlex gave %d rows for %d lines", i, LINES);
        *end = '\0';  /* an empty row: no words */
        char **words;
        int r = fl_split(lines[i], &words, NULL);
        if (strcmp(row, "ERR") == 0) {
            if (r != EINVAL)
                FAIL("line %d \"%s\": shlex refuses it, fl_split returned %d", i, lines[i], r);
            row = end + 1;
            continue;
        }
        if (r != 0)
            FAIL("line %d \"%s\": shlex splits it, fl_split returned %d", i, lines[i], r);
        char *mine;
        size_t mine_len;
        FILE *m = open_memstream(&mine, &mine_len);
        for (size_t w = 0; words[w]; w++) {
            if (w)
                fputc(' ', m);
            put_hex(m, words[w]);
            fputc('.', m);
        }
        fclose(m);
        if (strcmp(mine, row) != 0)
            FAIL("line %d \"%s\": fl_split gives %s, shlex.split %s", i, lines[i], mine, row);
        free(mine);
        fl_split_free(words);
        row = end + 1;
    }
}
