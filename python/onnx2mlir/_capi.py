"""_capi.py - the ctypes view of include/onnx2mlir.h: the structures, the
functions' signatures, and finding libonnx2mlir.so ($ONNX2MLIR_LIBRARY, else
the path _config.py gives relative to this folder)."""
import ctypes
import os

from . import _config

c_int64_p = ctypes.POINTER(ctypes.c_int64)

WARN_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)


class Diag(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 2048),
                ("warn", WARN_FN), ("warn_user", ctypes.c_void_p)]


class LoadOptions(ctypes.Structure):
    _fields_ = [("data_dir", ctypes.c_char_p), ("skip_inference", ctypes.c_int)]


class ImportOptions(ctypes.Structure):
    _fields_ = [("target", ctypes.c_int), ("bytecode", ctypes.c_int), ("progress", PROGRESS_FN),
                ("progress_user", ctypes.c_void_p), ("tosa_spec", ctypes.c_char_p)]


class ValueDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_char_p), ("is_tensor", ctypes.c_int),
                ("dtype", ctypes.c_int), ("rank", ctypes.c_int), ("dims", c_int64_p),
                ("dim_names", ctypes.POINTER(ctypes.c_char_p))]


class TensorData(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("dims", c_int64_p), ("data", ctypes.c_void_p), ("nbytes", ctypes.c_size_t)]


class RunConfig(ctypes.Structure):
    _fields_ = [("target", ctypes.c_int), ("opt_level", ctypes.c_int)]


class CompileOptions(ctypes.Structure):
    _fields_ = [("output", ctypes.c_char_p), ("header", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("opt_level", ctypes.c_int), ("cc", ctypes.c_char_p), ("weights", ctypes.c_char_p),
                ("shared_runtime", ctypes.c_int), ("cpu", ctypes.c_char_p)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("target", ctypes.c_int), ("opt_level", ctypes.c_int), ("threads", ctypes.c_int),
                ("no_cache", ctypes.c_int), ("cache_dir", ctypes.c_char_p), ("max_variants", ctypes.c_int),
                ("shapes", ctypes.c_int), ("data_dir", ctypes.c_char_p)]


class SessionStats(ctypes.Structure):
    _fields_ = [("calls", ctypes.c_int64), ("compiles", ctypes.c_int64), ("cache_loads", ctypes.c_int64),
                ("evictions", ctypes.c_int64), ("variants", ctypes.c_int), ("generic", ctypes.c_int),
                ("compile_ms", ctypes.c_double), ("generic_refused", ctypes.c_char_p)]


def _library_path():
    override = os.environ.get("ONNX2MLIR_LIBRARY")
    if override:
        return override
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, _config.LIBRARY_DIR, _config.LIBRARY_NAME))


def _declare(lib):
    p, i, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    diag = ctypes.POINTER(Diag)
    table = {
        "o2m_status_name": (s, [i]),
        "o2m_version": (s, []),
        "o2m_free": (None, [p]),
        "o2m_model_load": (i, [s, ctypes.POINTER(LoadOptions), ctypes.POINTER(p), diag]),
        "o2m_model_free": (None, [p]),
        "o2m_model_info_text": (i, [p, ctypes.c_uint, ctypes.POINTER(p), diag]),
        "o2m_model_input_count": (i, [p]),
        "o2m_model_output_count": (i, [p]),
        "o2m_model_input": (i, [p, i, ctypes.POINTER(ValueDesc), diag]),
        "o2m_model_output": (i, [p, i, ctypes.POINTER(ValueDesc), diag]),
        "o2m_target_from_name": (i, [s]),
        "o2m_model_import_to_buffer": (i, [p, ctypes.POINTER(ImportOptions), ctypes.POINTER(p),
                                           ctypes.POINTER(ctypes.c_size_t), diag]),
        "o2m_model_run": (i, [p, ctypes.POINTER(RunConfig), i, ctypes.POINTER(TensorData),
                              ctypes.POINTER(p), diag]),
        "o2m_model_compile": (i, [p, ctypes.POINTER(CompileOptions), diag]),
        "o2m_results_count": (i, [p]),
        "o2m_results_get": (ctypes.POINTER(TensorData), [p, i]),
        "o2m_results_free": (None, [p]),
        "o2m_session_create": (i, [s, ctypes.POINTER(SessionOptions), ctypes.POINTER(p), diag]),
        "o2m_session_create_from_bytes": (i, [ctypes.c_char_p, ctypes.c_size_t, s, ctypes.POINTER(SessionOptions),
                                              ctypes.POINTER(p), diag]),
        "o2m_session_free": (None, [p]),
        "o2m_session_input_count": (i, [p]),
        "o2m_session_output_count": (i, [p]),
        "o2m_session_input": (i, [p, i, ctypes.POINTER(ValueDesc), diag]),
        "o2m_session_output": (i, [p, i, ctypes.POINTER(ValueDesc), diag]),
        "o2m_session_run": (i, [p, i, ctypes.POINTER(TensorData), ctypes.POINTER(p), diag]),
        "o2m_session_get_stats": (i, [p, ctypes.POINTER(SessionStats), diag]),
    }
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = _declare(ctypes.CDLL(_library_path()))
