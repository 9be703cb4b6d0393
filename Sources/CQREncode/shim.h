#ifndef COIDC_QRENCODE_SHIM_H
#define COIDC_QRENCODE_SHIM_H

#include <qrencode.h>

#endif
