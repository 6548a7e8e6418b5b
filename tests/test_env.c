/*
 * test_env.c: the child's environment (pitfalls 17, 44).
 *
 * Base: environ (default), .env, or empty with FL_ENV_CLEAR; then env_set,
 * then env_unset, in order.
 */
#include "test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

extern char **environ;

TEST(environment_is_inherited_by_default)
{
    ASSERT_SYS(setenv("FL_TEST_VAR", "hello world", 1));
    struct fl_cmd cmd = { .argv = PROBE("env"), .backend = BACKEND };
    char *out = t_probe(&cmd);
    ASSERT_STR_EQ(t_get(out, "env FL_TEST_VAR=hello"), "world");
    /* Every variable of the parent, in the same order. */
    size_t n = 0;
    for (char **e = environ; *e; e++)
        n++;
    ASSERT_EQ(t_count_lines(out, "env "), n);
    unsetenv("FL_TEST_VAR");
}

/* glibc's fork() runs the atfork handlers after the plan is built and
 * before the child's exec; one that sets new variables moves environ's
 * array and frees the old one. */
static atomic_bool grow_at_fork;

static void grow_environ(void)
{
    if (!atomic_load(&grow_at_fork))
        return;
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "FL_T_ATFORK_%d", i);
        setenv(name, "1", 1);
    }
}

TEST(an_atfork_handler_that_moves_environ_leaves_the_child_the_environment_of_the_call)
{
    ASSERT_SYS(setenv("FL_TEST_VAR", "before", 1));
    ASSERT_OK(pthread_atfork(grow_environ, NULL, grow_environ));
    atomic_store(&grow_at_fork, true);
    struct fl_cmd cmd = { .argv = PROBE("env"), .backend = BACKEND };
    char *out = t_probe(&cmd);
    atomic_store(&grow_at_fork, false);
    ASSERT_EQ(t_count_lines(out, "env FL_TEST_VAR=before"), 1);
    ASSERT_EQ(t_count_lines(out, "env FL_T_ATFORK_"), 0);
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof name, "FL_T_ATFORK_%d", i);
        unsetenv(name);
    }
    unsetenv("FL_TEST_VAR");
}

TEST(env_clear_gives_an_empty_environment)
{
    ASSERT_SYS(setenv("FL_TEST_VAR", "x", 1));
    struct fl_cmd cmd = {
        .argv = PROBE("env", "echo", "end"),
        .flags = FL_ENV_CLEAR,
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "end\n");
    unsetenv("FL_TEST_VAR");
}

TEST(env_clear_ignores_an_explicit_env)
{
    struct fl_cmd cmd = {
        .argv = PROBE("env", "echo", "end"),
        .env = (char *const[]){ "ONLY=1", NULL },
        .flags = FL_ENV_CLEAR,
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "end\n");
}

TEST(env_clear_with_env_set_gives_only_the_set_variables)
{
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .flags = FL_ENV_CLEAR,
        .env_set = (const char *const[]){ "A=1", "B=two words", NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "env A=1\nenv B=two words\n");
}

TEST(explicit_env_is_the_whole_environment)
{
    ASSERT_SYS(setenv("FL_TEST_VAR", "x", 1));
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env = (char *const[]){ "ONLY=1", "ALSO=", NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "env ONLY=1\nenv ALSO=\n");
    unsetenv("FL_TEST_VAR");
}

TEST(explicit_empty_env_gives_an_empty_environment)
{
    struct fl_cmd cmd = {
        .argv = PROBE("env", "echo", "end"),
        .env = (char *const[]){ NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "end\n");
}

TEST(env_set_adds_and_replaces)
{
    ASSERT_SYS(setenv("FL_TEST_VAR", "old", 1));
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env_set = (const char *const[]){ "FL_TEST_VAR=new", "FL_NEW=a=b=c",
                                          NULL },
        .backend = BACKEND,
    };
    char *out = t_probe(&cmd);
    ASSERT_EQ(t_count_lines(out, "env FL_TEST_VAR="), 1);
    ASSERT_STR_EQ(t_get(out, "env FL_TEST_VAR=new"), "");
    ASSERT_EQ(t_count_lines(out, "env FL_NEW=a=b=c\n"), 1);
    /* The parent's environment is untouched. */
    ASSERT_STR_EQ(getenv("FL_TEST_VAR"), "old");
    ASSERT_NULL(getenv("FL_NEW"));
    unsetenv("FL_TEST_VAR");
}

TEST(env_set_twice_keeps_the_last)
{
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env = (char *const[]){ "A=0", NULL },
        .env_set = (const char *const[]){ "A=1", "A=2", NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "env A=2\n");
}

TEST(env_set_replaces_every_duplicate_of_a_name)
{
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env = (char *const[]){ "A=1", "B=x", "A=2", NULL },
        .env_set = (const char *const[]){ "A=3", NULL },
        .backend = BACKEND,
    };
    /* The set takes the first A's place; the second A is gone, so no
     * reader of the environment can find the old value. */
    ASSERT_STR_EQ(t_probe(&cmd), "env A=3\nenv B=x\n");
}

TEST(env_unset_removes_a_variable)
{
    ASSERT_SYS(setenv("FL_TEST_VAR", "x", 1));
    struct fl_cmd cmd = {
        .argv = PROBE("getenv", "FL_TEST_VAR", "getenv", "HOME_NOT_SET_X"),
        .env_unset = (const char *const[]){ "FL_TEST_VAR", "HOME_NOT_SET_X",
                                            NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "unset FL_TEST_VAR\nunset HOME_NOT_SET_X\n");
    ASSERT_STR_EQ(getenv("FL_TEST_VAR"), "x");
    unsetenv("FL_TEST_VAR");
}

TEST(env_unset_applies_after_env_set)
{
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env = (char *const[]){ "KEEP=1", NULL },
        .env_set = (const char *const[]){ "GONE=1", NULL },
        .env_unset = (const char *const[]){ "GONE", NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "env KEEP=1\n");
}

TEST(env_unset_does_not_match_a_prefix)
{
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env = (char *const[]){ "AB=1", "A=2", NULL },
        .env_unset = (const char *const[]){ "A", NULL },
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "env AB=1\n");
}

TEST(env_set_without_equals_is_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .env_set = (const char *const[]){ "A=1", "NOEQUALS", NULL },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

TEST(env_unset_with_equals_or_empty_is_einval)
{
    struct fl_cmd cmd = {
        .argv = ARGV("/bin/true"),
        .env_unset = (const char *const[]){ "A=1", NULL },
        .backend = BACKEND,
    };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
    cmd.env_unset = (const char *const[]){ "", NULL };
    SPAWN_FAILS(&cmd, EINVAL, FL_STEP_PREPARE);
}

/* ---- another thread changes environ (pitfall 44) ------------------------- */

static atomic_bool churn_stop;

static void *churn_env(void *arg)
{
    (void)arg;
    char val[32];
    for (unsigned i = 0; !atomic_load(&churn_stop); i++) {
        snprintf(val, sizeof val, "%u", i);
        setenv("FL_CHURN", val, 1);
        setenv(i % 2 ? "FL_CHURN_A" : "FL_CHURN_B", val, 1);
        unsetenv("FL_CHURN");
        unsetenv(i % 2 ? "FL_CHURN_B" : "FL_CHURN_A");
        t_pace(i);
    }
    return NULL;
}

TEST(setenv_churn_in_another_thread_with_explicit_env) /* stress */
{
    pthread_t t;
    ASSERT_OK(pthread_create(&t, NULL, churn_env, NULL));
    char *const env[] = { "PATH=/usr/bin:/bin", "FL_X=1", NULL };
    for (int i = 0, n = t_scaled(500); i < n; i++) {
        struct fl_cmd cmd = {
            .argv = ARGV("true"),
            .env = env,
            .env_set = (const char *const[]){ "FL_Y=2", NULL },
            .backend = BACKEND,
        };
        struct fl_proc p;
        SPAWN(&cmd, &p);
        ASSERT_EXITED(t_wait(&p), 0);
    }
    /* The child still sees exactly the explicit environment. */
    struct fl_cmd cmd = {
        .argv = PROBE("env"),
        .env = env,
        .backend = BACKEND,
    };
    ASSERT_STR_EQ(t_probe(&cmd), "env PATH=/usr/bin:/bin\nenv FL_X=1\n");
    atomic_store(&churn_stop, true);
    pthread_join(t, NULL);
}
