/* "SIGSEGV: Segmentation fault" for messages about how a rank ended. */
#ifndef LM_LAUNCHER_SIGNAL_NAMES_H
#define LM_LAUNCHER_SIGNAL_NAMES_H
const char *lm_signal_abbrev(int signo); /* "SIGSEGV", or "SIG?" */
#endif
