/* What a program linked with the core's objects tells the core about itself. */
#ifndef MKCCL_PLUGIN_PROGRAM_H
#define MKCCL_PLUGIN_PROGRAM_H

/* A program linked with the core's objects (mkccl-netcheck, mkccl-tune)
 * that is installed in bin/ beside lib/ defines this (any value), and the
 * core then also looks for the default manifest in <its folder>/../<libdir>/
 * mkccl. Programs that do not (the tests) find only what is next to them. */
extern const int mkccl_program_beside_lib __attribute__((weak));

#endif
