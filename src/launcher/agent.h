/* The launch agent of a job across nodes: `mpirun --lm-agent`, started on
 * each host through the launch template, with its control channel on stdin
 * and stdout (agent_link.h). */
#ifndef LM_LAUNCHER_AGENT_H
#define LM_LAUNCHER_AGENT_H

/* Runs the agent until its node's ranks and subtree have ended. */
int lm_agent_main(void);

#endif
