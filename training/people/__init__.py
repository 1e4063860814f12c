"""Playing with people: what puts a policy in front of a person or another front end.

The terminal table (``play``), the browser table (``serve``), the words both show (``labels``), the demo (``demo``)
and the export of policies to ONNX and JSON for front ends that run without torch (``export``).
"""
