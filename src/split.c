/* split.c: a command line to argv, as a POSIX shell splits words, with no
 * expansion of any kind. What a shell would treat as an operator or an
 * expansion is refused, not passed on as text: nobody should believe that
 * a shell runs.
 *
 * One pass over the line writes the words into one allocation: the
 * pointers first, then the strings. A word never takes more bytes than its
 * source and the blank that ends it, so the line's length bounds both. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* What a shell would do with an unquoted c, or NULL for plain text. */
static const char *shell_meaning(char c)
{
    switch (c) {
    case '|': return "a pipe";
    case '&': return "a background job or an and-list";
    case ';': case '\n': return "a command separator";
    case '<': case '>': return "a redirection";
    case '(': case ')': return "a subshell";
    case '$': return "an expansion";
    case '`': return "a command substitution";
    default: return NULL;
    }
}

static int refuse(struct fl_error *e, size_t at, char c, const char *why)
{
    char detail[FL_ERROR_DETAIL_MAX];
    if (c == '\n')
        snprintf(detail, sizeof detail, "byte %zu: a newline %s", at, why);
    else
        snprintf(detail, sizeof detail, "byte %zu: '%c' %s", at, c, why);
    return fl__fail(e, EINVAL, FL_STEP_PREPARE, at > (size_t)INT32_MAX ? -1 : (int)at, "",
                    detail);
}

static int refuse_operator(struct fl_error *e, size_t at, char c, bool in_double)
{
    char why[96];
    const char *meaning = shell_meaning(c);
    snprintf(why, sizeof why, "%sis %s in a shell, and no shell runs here",
             in_double ? "inside double quotes " : "", meaning ? meaning : "special");
    return refuse(e, at, c, why);
}

/* Whether the double quote opened before line[i] closes: a backslash
 * there escapes a '"' (and whatever else it precedes, none of which
 * closes it). */
static bool double_quote_closes(const char *line, size_t i, size_t len)
{
    for (; i < len; i++) {
        if (line[i] == '\\')
            i++;
        else if (line[i] == '"')
            return true;
    }
    return false;
}

int fl_split(const char *line, char ***argv, struct fl_error *error)
{
    struct fl_error scratch = { 0 };
    struct fl_error *e = error ? error : &scratch;
    fl__fail(e, 0, FL_STEP_NONE, -1, "", "");
    if (!argv)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "no argv to fill");
    *argv = NULL;
    if (!line)
        return fl__fail(e, EINVAL, FL_STEP_PREPARE, -1, "", "no command line");

    size_t len = strlen(line), max_words = len / 2 + 1;
    if (len > (SIZE_MAX - 1) / (sizeof(char *) + 1) - 2)  /* the size below would wrap */
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "a command line too long to split");
    char **words = malloc((max_words + 1) * sizeof *words + len + 1);
    if (!words)
        return fl__fail(e, ENOMEM, FL_STEP_PREPARE, -1, "", "the words of the command line");
    char *out = (char *)(words + max_words + 1);
    size_t n = 0;
    bool in_word = false;

    for (size_t i = 0; i < len; i++) {
        char c = line[i];
        if (c == '\\' && line[i + 1] == '\n') {
            i++;  /* backslash-newline joins the lines: it is not there */
            continue;
        }
        if (is_blank(c)) {
            if (in_word)
                *out++ = '\0';
            in_word = false;
            continue;
        }
        if (!in_word && c == '#') {
            free(words);
            return refuse(e, i, c, "starts a comment in a shell, and no shell runs here");
        }
        if (!in_word)
            words[n++] = out;
        in_word = true;
        if (c == '\\') {
            if (i + 1 == len) {
                free(words);
                return refuse(e, i, c, "ends the line: there is nothing to escape");
            }
            *out++ = line[++i];
        } else if (c == '\'') {
            size_t open = i;
            while (++i < len && line[i] != '\'')
                *out++ = line[i];
            if (i == len) {
                free(words);
                return refuse(e, open, c, "opens a single quote that never closes");
            }
        } else if (c == '"') {
            size_t open = i;
            /* The rest of the line is the quote's, if it never closes: a
             * shell says so before it looks at anything inside. */
            if (!double_quote_closes(line, i + 1, len)) {
                free(words);
                return refuse(e, open, c, "opens a double quote that never closes");
            }
            for (i++; line[i] != '"'; i++) {
                char d = line[i];
                if (d == '$' || d == '`') {
                    free(words);
                    return refuse_operator(e, i, d, true);
                }
                if (d == '\\' && i + 1 < len && strchr("$`\"\\\n", line[i + 1])) {
                    if (line[++i] != '\n')
                        *out++ = line[i];
                } else {
                    *out++ = d;
                }
            }
        } else if (shell_meaning(c)) {
            free(words);
            return refuse_operator(e, i, c, false);
        } else {
            *out++ = c;
        }
    }
    if (in_word)
        *out = '\0';
    words[n] = NULL;
    *argv = words;
    return 0;
}

void fl_split_free(char **argv)
{
    free(argv);
}
