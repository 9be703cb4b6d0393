#ifndef COIDC_JWT_SHIM_H
#define COIDC_JWT_SHIM_H

#include <jwt.h>

#endif
