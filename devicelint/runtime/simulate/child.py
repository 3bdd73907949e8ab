"""The simulation process: ``python -m devicelint.runtime.simulate.child REQUEST ANSWER``.

The request (written by ``devicelint.runtime.simulate``) is a plain-pickle header (the caller's
import path, the device, the caller's line) followed by the payload, which may import torch as
it unpickles. The fake CUDA shim has to be loaded before torch is imported (fake_cuda.py), so
this module imports nothing that imports torch until the shim is in.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from typing import Any

from devicelint.runtime.errors import SimulationError
from devicelint.runtime.simulate import fake_cuda
from devicelint.runtime.simulate.code_origins import restore_code_files


def main(request_path: str, answer_path: str) -> None:
    shim = fake_cuda.prepare()
    answer: tuple[str, Any]
    try:
        with open(request_path, "rb") as stream:
            header = pickle.load(stream)
            sys.path[:] = header["path"]  # before the payload: unpickling imports the user's modules
            try:
                payload = pickle.load(stream)
            except Exception as error:  # noqa: BLE001 - unpickling raises whatever a __setstate__ raises
                raise SimulationError(
                    f"the simulation process cannot unpickle the model and inputs ({type(error).__name__}: {error})"
                ) from None
        # cloudpickle >= 3.1.3 renames by-value code to `<dynamic-code>`: findings name the user's file
        restore_code_files(payload, header.get("code_files", {}))
        from devicelint.runtime.simulate.steps import simulate_request

        answer = ("ok", simulate_request(payload, header["device"], header["caller"], shim))
    except SimulationError as error:
        answer = ("error", str(error))
    except Exception as error:  # noqa: BLE001 - anything else is reported with its traceback, never lost
        answer = ("error", f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
    with open(answer_path + ".part", "wb") as stream:
        pickle.dump(answer, stream)
    os.replace(answer_path + ".part", answer_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
