# kind: spy
# why: calls the course's own rule, imported before the test's spy is installed, instead of writing it
# fails-with: write the rule yourself
import torch
from course_utils.hardware import pick_amp_dtype as _pick


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    return _pick(device, capability=capability, bf16_real=cpu_has_bf16)


def needs_grad_scaler(dtype):
    return dtype == torch.float16
