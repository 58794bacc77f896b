// SPDX-License-Identifier: GPL-3.0-or-later
// C interface of the ts_sentencepiece module: every SentencePiece call lives in that small
// shared MODULE so ts_text can dlopen() it with RTLD_DEEPBIND (see
// core/src/text/sentencepiece_loader.cpp for why). Shared by the module and its loader.
//
// Conventions: functions return 0 (or a non-null handle) on success. On failure they return
// non-zero (or null) and set *error to a NUL-terminated message. Every buffer or message handed
// out must be released with ts_spm_free(); model handles with ts_spm_model_free(). Nothing
// throws across this boundary.
#pragma once

#include <stddef.h>

#define TS_SPM_API_VERSION 1
#define TS_SPM_EXPORT __attribute__((visibility("default")))

extern "C" {

typedef struct TsSpmModel TsSpmModel;

/// Produces the next training sentence: sets *data/*size (valid until the next call) and returns
/// 1, or returns 0 at the end. Must not throw.
typedef int (*TsSpmNextSentence)(void* context, const char** data, size_t* size);

typedef int (*TsSpmApiVersionFn)(void);
typedef void (*TsSpmFreeFn)(void* buffer);
typedef int (*TsSpmTrainFn)(TsSpmNextSentence next, void* context, const char* const* option_keys,
                            const char* const* option_values, size_t option_count, char** model, size_t* model_size,
                            char** error);
typedef TsSpmModel* (*TsSpmLoadFn)(const char* model, size_t model_size, char** error);
typedef void (*TsSpmModelFreeFn)(TsSpmModel* model);
typedef int (*TsSpmEncodeFn)(const TsSpmModel* model, const char* text, size_t text_size, char** pieces,
                             size_t** piece_sizes, size_t* piece_count, char** error);
typedef int (*TsSpmDecodeFn)(const TsSpmModel* model, const char* const* pieces, const size_t* piece_sizes,
                             size_t piece_count, char** text, size_t* text_size, char** error);

/// TS_SPM_API_VERSION of the module, so a stale module is refused rather than misused.
TS_SPM_EXPORT int ts_spm_api_version(void);
/// Releases a buffer or error message returned by this module (null is fine).
TS_SPM_EXPORT void ts_spm_free(void* buffer);
/// Trains a model on the sentences `next` yields, with SentencePieceTrainer key/value options;
/// *model receives the serialized ModelProto (*model_size bytes).
TS_SPM_EXPORT int ts_spm_train(TsSpmNextSentence next, void* context, const char* const* option_keys,
                               const char* const* option_values, size_t option_count, char** model, size_t* model_size,
                               char** error);
/// Loads a serialized ModelProto; null (and *error) when it is not a valid model.
TS_SPM_EXPORT TsSpmModel* ts_spm_load(const char* model, size_t model_size, char** error);
TS_SPM_EXPORT void ts_spm_model_free(TsSpmModel* model);
/// Encodes text to pieces: *pieces holds them concatenated, *piece_sizes their byte lengths.
TS_SPM_EXPORT int ts_spm_encode(const TsSpmModel* model, const char* text, size_t text_size, char** pieces,
                                size_t** piece_sizes, size_t* piece_count, char** error);
/// Decodes pieces back to text (*text_size bytes, also NUL-terminated).
TS_SPM_EXPORT int ts_spm_decode(const TsSpmModel* model, const char* const* pieces, const size_t* piece_sizes,
                                size_t piece_count, char** text, size_t* text_size, char** error);

}  // extern "C"
