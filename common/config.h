/* INI configuration (parsed with libinih) with typed, range-checked getters.
 *
 * Every value remembers where it came from (FILE:LINE, or "--set section.key"), so that an
 * error names it: "run.ini:12: contact.friction: must be >= 0 (got -0.1)". Every getter marks
 * the key as used and records the resolved value (defaults included) for provenance; after all
 * consumers have read the config, config_check_unused() reports unknown sections and keys. */
#ifndef CDLAB_CONFIG_H
#define CDLAB_CONFIG_H

#include "status.h"
#include "vec3.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_NAME_MAX 64
#define CONFIG_VALUE_MAX 4096
/* The most keys a config may have (each entry holds CONFIG_VALUE_MAX bytes: 41 MB at most); its
 * largest, 64 walls with their keys, has about 1,000. */
#define CONFIG_MAX_KEYS 10000

typedef struct config_entry {
    char section[CONFIG_NAME_MAX];
    char key[CONFIG_NAME_MAX];
    char value[CONFIG_VALUE_MAX];
    int line; /* line in the file, 0 for --set */
    int used;
    char *file_value; /* the file's value when --set replaced it (else NULL) */
} config_entry;

typedef struct config_resolved {
    char name[2 * CONFIG_NAME_MAX + 2]; /* section.key */
    char *value; /* whole, however long (a fixed 256 bytes cut lists short) */
} config_resolved;

/* One documented key (docs/config.md; build/config_schema.h is generated from it). A section
 * ending in '.' stands for every section with that prefix ("plane." for [plane.floor]). */
typedef struct config_key_doc {
    const char *section, *key, *type, *dflt, *meaning;
} config_key_doc;

typedef struct config {
    char file[PATH_MAX]; /* its path: the files it names, the output's config_file */
    char shown[216]; /* the path as messages give it: whole, or "..." and its last 200 characters */
    char *text;      /* the file's text, echoed into the output */
    config_entry *e;
    int n, cap;
    config_resolved *res;
    int nres, rescap;
    int res_lost; /* a value could not be recorded (out of memory): the output refuses */
    /* the documented keys: a getter asked for a key not among them records it here (the code
     * reads a key docs/config.md lacks), and the reader refuses the config */
    const config_key_doc *schema;
    int nschema;
    char undocumented[2 * CONFIG_NAME_MAX + 2];
} config;

status config_load_file(config *c, const char *path, diag *err);
status config_load_string(config *c, const char *text, const char *name, diag *err);
/* Applies "section.key=value" (the section may itself contain dots: plane.base.normal). */
status config_set(config *c, const char *assignment, diag *err);
void config_free(config *c);

/* Names of the sections present whose name starts with prefix followed by '.' (e.g. "plane"),
 * in file order; returns the count and fills names (up to max). */
int config_sections_with_prefix(const config *c, const char *prefix, char names[][CONFIG_NAME_MAX],
                                int max);
int config_has(const config *c, const char *section, const char *key);
/* An option's keys given while it is off: the first of keys (NULL-terminated) present in
 * section is refused, "section.key: is used only with <what>" (taken, it would do nothing). */
status config_used_only_with(const config *c, const char *section, const char *const *keys,
                             const char *what, diag *err);
/* Line of the first key of a section: -1 if the section is absent, 0 if it only comes from
 * --set. */
int config_section_line(const config *c, const char *section);
/* The --set overrides, "section.key=value" one a line, all of them (free it); NULL: out of
 * memory. */
char *config_overrides(const config *c);
/* The value a key has in the file, before any --set (NULL when the file does not give it). */
const char *config_file_value(const config *c, const char *section, const char *key);
/* The key was given on the command line (--set), whether or not the file has it too. */
int config_given_by_set(const config *c, const char *section, const char *key);
/* Marks every key of a section that this run does not use (another engine's) as read, after
 * checking its name against keys (NULL-terminated; NULL: the section's keys in the schema of
 * config_use_schema): a misspelt key stays an error. Returns the number of keys in the section
 * through *count (0: absent). */
#define CONFIG_SECTION_KEYS_MAX 64
status config_skip_section(config *c, const char *section, const char *const *keys, int *count,
                           diag *err);

/* From now on every key asked for must be among these documented keys (see config.undocumented). */
void config_use_schema(config *c, const config_key_doc *schema, int n);
/* The hints of an unknown name (common/config_hint.c): the closest of known[0 .. n) (NULL when
 * none is close), and " (did you mean 'x'?)" among the keys read from section sec, or
 * " (it is a key of [a], [b])" for a key of other sections, or "" (buf: the text). */
const char *config_closest(const char *name, const char *const *known, int n);
const char *config_key_hint(const config *c, const char *sec, const char *key, char *buf, size_t n);
/* Whether a section and key are documented (always 1 without a schema). */
int config_documented(const config *c, const char *section, const char *key);

/* Getters: required != 0 makes a missing key an error; otherwise dflt is used. Ranges are
 * inclusive unless noted; a value outside is an error (never clamped). */
status config_int(config *c, const char *sec, const char *key, int required, long dflt, long min,
                  long max, long *out, diag *err);
status config_u64(config *c, const char *sec, const char *key, int required, uint64_t dflt,
                  uint64_t *out, diag *err);
/* min_open: CONFIG_MIN_OPEN (or 1) and/or CONFIG_MAX_OPEN make those bounds exclusive. */
enum { CONFIG_MIN_OPEN = 1, CONFIG_MAX_OPEN = 2 };
status config_double(config *c, const char *sec, const char *key, int required, double dflt,
                     double min, int min_open, double max, double *out, diag *err);
status config_bool(config *c, const char *sec, const char *key, int required, int dflt, int *out,
                   diag *err);
/* choices: NULL-terminated list; *out is the index of the chosen word. */
status config_enum(config *c, const char *sec, const char *key, int required, int dflt,
                   const char *const *choices, int *out, diag *err);
status config_vec3(config *c, const char *sec, const char *key, int required, vec3 dflt, vec3 *out,
                   diag *err);
/* Exactly n numbers separated by spaces or commas. */
status config_doubles(config *c, const char *sec, const char *key, int required, int n,
                      const double *dflt, double *out, diag *err);
/* A list of integers separated by spaces or commas; *out is malloc'ed (caller frees). */
status config_int_list(config *c, const char *sec, const char *key, long **out, int *count,
                       diag *err);
status config_string(config *c, const char *sec, const char *key, int required, const char *dflt,
                     char *out, size_t outsize, diag *err);

/* What a number of a config (or a particle file) may be, for the messages. */
#define CONFIG_NUMBER_RANGE "a finite number, 0 or of magnitude 1e-308 to 1e308"

/* Reads one decimal number at s (leading blanks skipped) into *v, *end after it: 0, or
 * CONFIG_NOT_A_NUMBER (no number there, or hexadecimal, which strtod would take: "0x10" = 16),
 * or CONFIG_OUT_OF_RANGE (1e400, or 1e-400 that strtod reads as 0). "inf" and "nan" are read:
 * the caller says why they are refused. The one number reader of configs and particle files. */
enum { CONFIG_NOT_A_NUMBER = 1, CONFIG_OUT_OF_RANGE = 2 };
int config_read_number(const char *s, char **end, double *v);
/* s whole (blanks around it allowed) one finite number in range into *v: 1, else 0. */
int config_parse_number(const char *s, double *v);

/* v as the shortest of %.15g, %.16g, %.17g that reads back to the same double (as the
 * resolved list records numbers). */
void config_fmt_double(char *buf, size_t n, double v);

/* Records a derived value (e.g. an automatic default) in the resolved list. */
void config_record(config *c, const char *sec, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Error for a key whose value is inconsistent with others (names the key's location). */
status config_error(const config *c, const char *sec, const char *key, diag *err, const char *fmt,
                    ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* known_sections: NULL-terminated; a name ending in '.' matches any "prefix.NAME" section. */
status config_check_unused(const config *c, const char *const *known_sections, diag *err);

#endif
