// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";

/// @title NavOracle
/// @notice The per-fund, per-epoch NAV record and its lifecycle:
///         None -> Draft (draft) -> PendingVerification (submit) -> Verified (verify) -> Published (publish).
///         A verifier may reject a PendingVerification or Verified record back to Draft; a Draft may be
///         re-drafted with new values. Epochs publish strictly in order, starting at epoch 1.
///         NAV operators draft, submit and publish; verifiers verify and reject.
contract NavOracle is AccessControl {
    enum Status {
        None,
        Draft,
        PendingVerification,
        Verified,
        Published
    }

    struct Record {
        Status status;
        uint256 navPerShare;
        uint256 totalAssets;
        uint256 totalSupply;
    }

    bytes32 public constant NAV_OPERATOR_ROLE = keccak256("NAV_OPERATOR_ROLE");
    bytes32 public constant VERIFIER_ROLE = keccak256("VERIFIER_ROLE");

    event NavDrafted(
        address indexed fund,
        uint64 indexed epoch,
        uint256 navPerShare,
        uint256 totalAssets,
        uint256 totalSupply
    );
    event NavSubmitted(address indexed fund, uint64 indexed epoch);
    event NavVerified(address indexed fund, uint64 indexed epoch, address indexed verifier);
    event NavPublished(address indexed fund, uint64 indexed epoch, uint256 navPerShare);
    event NavRejected(address indexed fund, uint64 indexed epoch, string reason);

    error InvalidTransition(uint8 from, uint8 to);
    /// @notice publish(epoch) while epoch - 1 is not published yet.
    error PublishOutOfOrder(uint64 expectedEpoch, uint64 epoch);
    error InvalidEpoch(uint64 epoch);

    mapping(address fund => mapping(uint64 epoch => Record)) private _records;
    /// @notice The last published epoch per fund (0 while none is published).
    mapping(address fund => uint64) public latestPublishedEpoch;

    constructor(address admin, address operator, address verifier) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(NAV_OPERATOR_ROLE, operator);
        _grantRole(VERIFIER_ROLE, verifier);
    }

    function draft(
        address fund,
        uint64 epoch,
        uint256 navPerShare,
        uint256 totalAssets,
        uint256 totalSupply
    ) external onlyRole(NAV_OPERATOR_ROLE) {
        if (epoch == 0) revert InvalidEpoch(epoch);
        Record storage r = _records[fund][epoch];
        if (r.status != Status.None && r.status != Status.Draft) _revertTransition(r.status, Status.Draft);
        r.status = Status.Draft;
        r.navPerShare = navPerShare;
        r.totalAssets = totalAssets;
        r.totalSupply = totalSupply;
        emit NavDrafted(fund, epoch, navPerShare, totalAssets, totalSupply);
    }

    function submit(address fund, uint64 epoch) external onlyRole(NAV_OPERATOR_ROLE) {
        _move(fund, epoch, Status.Draft, Status.PendingVerification);
        emit NavSubmitted(fund, epoch);
    }

    function verify(address fund, uint64 epoch) external onlyRole(VERIFIER_ROLE) {
        _move(fund, epoch, Status.PendingVerification, Status.Verified);
        emit NavVerified(fund, epoch, msg.sender);
    }

    function reject(address fund, uint64 epoch, string calldata reason) external onlyRole(VERIFIER_ROLE) {
        Record storage r = _records[fund][epoch];
        if (r.status != Status.PendingVerification && r.status != Status.Verified) {
            _revertTransition(r.status, Status.Draft);
        }
        r.status = Status.Draft;
        emit NavRejected(fund, epoch, reason);
    }

    function publish(address fund, uint64 epoch) external onlyRole(NAV_OPERATOR_ROLE) {
        _move(fund, epoch, Status.Verified, Status.Published);
        uint64 expected = latestPublishedEpoch[fund] + 1;
        if (epoch != expected) revert PublishOutOfOrder(expected, epoch);
        latestPublishedEpoch[fund] = epoch;
        emit NavPublished(fund, epoch, _records[fund][epoch].navPerShare);
    }

    function record(
        address fund,
        uint64 epoch
    ) external view returns (uint8 status, uint256 navPerShare, uint256 totalAssets, uint256 totalSupply) {
        Record storage r = _records[fund][epoch];
        return (uint8(r.status), r.navPerShare, r.totalAssets, r.totalSupply);
    }

    function _move(address fund, uint64 epoch, Status from, Status to) private {
        Record storage r = _records[fund][epoch];
        if (r.status != from) _revertTransition(r.status, to);
        r.status = to;
    }

    function _revertTransition(Status from, Status to) private pure {
        revert InvalidTransition(uint8(from), uint8(to));
    }
}
