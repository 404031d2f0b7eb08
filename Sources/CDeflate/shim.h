// libdeflate, for whole-body gzip and deflate decoding (apt: libdeflate-dev).
#ifndef H5REPLAY_CDEFLATE_SHIM_H
#define H5REPLAY_CDEFLATE_SHIM_H
#include <libdeflate.h>
#endif
