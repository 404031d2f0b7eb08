// zlib, for gzip and deflate content decoding (apt: zlib1g-dev).
#ifndef H5REPLAY_CZLIB_SHIM_H
#define H5REPLAY_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro in zlib.h; Swift cannot call macros.
static inline int h5r_inflate_init2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
#endif
