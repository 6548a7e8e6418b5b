/* capnames.h: capability names as capabilities(7) spells them, for
 * --caps and --ambient-caps. */
#ifndef FL_TOOLS_CAPNAMES_H
#define FL_TOOLS_CAPNAMES_H

/* The number of capability NAME: "net_bind_service", "CAP_NET_BIND_SERVICE"
 * or "Cap_Net_Bind_Service" (any case, with or without the cap_ prefix),
 * or a decimal number 0-63. Returns -1 for anything else. */
int cap_by_name(const char *name);

/* The name of capability cap ("cap_net_bind_service"), or NULL for a
 * number this build has no name for. */
const char *cap_name(int cap);

#endif
