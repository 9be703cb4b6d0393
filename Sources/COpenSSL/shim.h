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
#include <openssl/rsa.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

/* BIO_get_mem_data is a macro. */
static inline long coidc_bio_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

/* OSSL_PARAM_BLD keeps the name pointer until OSSL_PARAM_BLD_to_param: pass static strings. */
static inline const char *coidc_param_rsa_n(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *coidc_param_rsa_e(void) { return OSSL_PKEY_PARAM_RSA_E; }
static inline const char *coidc_param_group_name(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *coidc_param_public_key(void) { return OSSL_PKEY_PARAM_PUB_KEY; }

static inline const char *coidc_param_rsa_d(void) { return OSSL_PKEY_PARAM_RSA_D; }
static inline const char *coidc_param_rsa_p(void) { return OSSL_PKEY_PARAM_RSA_FACTOR1; }
static inline const char *coidc_param_rsa_q(void) { return OSSL_PKEY_PARAM_RSA_FACTOR2; }
static inline const char *coidc_param_rsa_dp(void) { return OSSL_PKEY_PARAM_RSA_EXPONENT1; }
static inline const char *coidc_param_rsa_dq(void) { return OSSL_PKEY_PARAM_RSA_EXPONENT2; }
static inline const char *coidc_param_rsa_qi(void) { return OSSL_PKEY_PARAM_RSA_COEFFICIENT1; }
static inline const char *coidc_param_private_key(void) { return OSSL_PKEY_PARAM_PRIV_KEY; }

/* EVP_PKEY_PUBLIC_KEY and EVP_PKEY_KEYPAIR are compound macros Swift cannot import. */
static inline int coidc_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int coidc_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }

#endif
