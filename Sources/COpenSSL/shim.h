#ifndef COIDC_OPENSSL_SHIM_H
#define COIDC_OPENSSL_SHIM_H

#include <openssl/opensslv.h>
#if OPENSSL_VERSION_NUMBER < 0x30000000L
#error "swift-oidc needs OpenSSL 3 (Debian: apt-get install libssl-dev)"
#endif

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#endif
