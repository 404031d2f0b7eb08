// libbrotli's decoder, for `Content-Encoding: br` (apt: libbrotli-dev).
#ifndef H5REPLAY_CBROTLI_SHIM_H
#define H5REPLAY_CBROTLI_SHIM_H
#include <brotli/decode.h>
#endif
