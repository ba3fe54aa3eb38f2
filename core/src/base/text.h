/*
 * text.h -- text that kbench did not write itself (a plugin's or variant's
 * name, a parameter's text, a reason, a GPU's name, a description: from a
 * plugin, an INI file or a results file), made safe for the output it goes
 * to.  Each output has one way in for such text:
 *
 *   the terminal table, compare's text, messages   kbc_text_visible()
 *   markdown text (cells, headings, notes)         kbc_text_md()
 *   JSON                                           kbc_text_utf8() (jansson
 *                                                  escapes the rest)
 *   CSV                                            kbc_text_csv() (RFC 4180,
 *                                                  formulas neutralised)
 *   gnuplot scripts                                gp_quote() (plot.c)
 *   HTML text and attribute values                 kbc_text_html()
 */
#ifndef KBENCH_TEXT_H
#define KBENCH_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0 when
   the bytes there are not one (a stray continuation byte, a sequence cut
   short, an overlong form, a surrogate, a code point above U+10FFFF, or
   the end of the string). */
size_t kbc_utf8_len(const char *s);

/* s with nothing in it that a terminal would act on: each C0 control and
   DEL is written as \n, \r, \t or \xHH, each C1 control (U+0080..U+009F)
   as \u0080.., and each byte that is not part of well-formed UTF-8 as
   \xHH; everything else (printable ASCII and well-formed UTF-8) is kept.
   Written to buf (n bytes, NUL-terminated; cut short at a character, never
   inside an escape or a UTF-8 sequence).  Returns buf. */
const char *kbc_text_visible_to(const char *s, char *buf, size_t n);

/* kbc_text_visible_to() into one of eight rotating buffers of this thread
   (4096 bytes each): valid until eight more calls, which is what a printf
   with several names needs.  NULL gives "". */
const char *kbc_text_visible(const char *s);

/* Whether s has a byte that kbc_text_visible() would change. */
int kbc_text_needs_escape(const char *s);

/* s for markdown outside a code span (a table cell, a heading, a note):
   kbc_text_visible(s), then a backslash before each character that
   markdown or HTML would act on (\ ` * [ ] < > & |), so that a name such
   as "<script>" or "[x](javascript:...)" shows as the text it is and a
   pipe never ends a table cell.  Eight rotating buffers, as
   kbc_text_visible(). */
const char *kbc_text_md(const char *s);

/* One text for a reporter that writes the terminal or markdown:
   kbc_text_md(s) when md, else kbc_text_visible(s). */
const char *kbc_text_shown(int md, const char *s);

/* s as a markdown code span on f: kbc_text_visible(s) between enough
   backquotes that none inside ends it (one more than its longest run), with
   a space inside each fence where s starts or ends with one; in a table
   cell (in_cell), each '|' escaped as GitHub's tables need even in a code
   span. */
void kbc_text_md_code(FILE *f, const char *s, int in_cell);

/* s as well-formed UTF-8, each byte that is not part of a well-formed
   sequence replaced by U+FFFD: NULL when s is well-formed already (use s
   itself), else a new string to free(). */
char *kbc_text_utf8(const char *s);

/* s as one CSV field on f, as RFC 4180 says: as it is, or, when it holds
   a comma, a double quote or a line break (LF or CR), in double quotes
   with its quotes doubled.  Text that a spreadsheet would run as a
   formula (it starts with =, +, -, @, a tab or CR and is not a number,
   "=HYPERLINK(...)" as a variant's name) gets a leading ' and is quoted,
   as OWASP advises for CSV injection: the cell shows the text; a script
   that reads the file drops the ' (docs/output.md).  NULL writes nothing
   (an empty field). */
void kbc_text_csv(FILE *f, const char *s);

/* s on f as HTML text, safe both between tags and inside a quoted
   attribute value (of HTML or inline SVG): kbc_text_visible(s) (so a line
   break or a byte that is not UTF-8 shows as an escape), then each of
   & < > " ' written as an entity.  NULL writes nothing. */
void kbc_text_html(FILE *f, const char *s);

/* Colour on a terminal: whether output to a stream that is_tty says is a
   terminal gets colour, given the NO_COLOR variable's value (no_color,
   NULL when unset): never where NO_COLOR is set to anything but "", as
   no-color.org asks, and never into a file or a pipe.  kbc_colour_for(f)
   asks it of stream f and the environment. */
int kbc_colour_wanted(int is_tty, const char *no_color);
int kbc_colour_for(FILE *f);

/* The SGR sequences kbench colours with, and the reset. */
#define KBC_SGR_GOOD "\033[32m"  /* green: pass, faster              */
#define KBC_SGR_BAD "\033[1;31m" /* bold red: FAIL, error, slower    */
#define KBC_SGR_WARN "\033[33m"  /* yellow: noisy, skipped, timeout  */
#define KBC_SGR_DIM "\033[2m"    /* dim: invalid, untested           */
#define KBC_SGR_RESET "\033[0m"

#endif
